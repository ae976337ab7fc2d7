#!/usr/bin/env node
// The cost floor of a JavaScript accumulator, for `toolcert bench`: the package's reference
// (Core: each call's fragments joined, one strict parse at the end; the wire and bytes levels
// through the package's SSE and dialect decoders), served over the protocol at every level,
// dialect and server profile (its decoders read every profile). Run as `node node_modules/toolcert-adapter/src/floor.js`, or
// `toolcert-adapter-floor` from the package's bin; `toolcert bench` runs it beside your
// adapter and prices your accumulator as a multiple of it.

import { QUIRKS, serve } from "./protocol.js";
import { referenceLevels } from "./reference.js";

serve({ name: "toolcert-adapter-floor", quirks: QUIRKS, ...referenceLevels() });
