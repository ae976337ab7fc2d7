// A toolcert adapter in TypeScript: the reference accumulator of the `toolcert-adapter`
// package, served at every level and dialect.
//
//     npm ci && npx tsc
//     toolcert certify --subject 'exec:node examples/adapters/typescript/dist/adapter.js'
//
// To certify your own library, give `serve` your accumulator's factories instead (README.md
// beside this file shows one in twenty lines).

import { QUIRKS, serve } from "toolcert-adapter";
import { Core, referenceLevels } from "toolcert-adapter/reference";

await serve({
  name: "toolcert-adapter-typescript",
  language: "typescript",
  version: "0.1.0",
  // The package's decoders read every server profile of their dialects alike.
  quirks: QUIRKS,
  schema: true,
  ...referenceLevels((tools, config) => new Core(tools, config)),
});
