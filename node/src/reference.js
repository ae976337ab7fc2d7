// A correct accumulator built from the protocol's pieces, and the lifts between levels.
//
// - Core: the provider-neutral accumulator (keyed by index with the call id kept, append only,
//   protocol errors for an unannounced index, a second announcement and a fragment after stop,
//   one strict parse per buffer at the end, nothing dispatched from a truncated or unfinished
//   turn). It is the events-level factory of the example adapter.
// - wireFromEvents(factory): an events-level accumulator fed at the wire level, through the
//   reference dialect decoders; bytesFromWire(factory): a wire-level one fed at the bytes
//   level, through the SSE decoder. What is certified below the events level is then these
//   decoders, not your library.

import { DIALECTS as DECODERS } from "./dialects.js";
import { schemaErrors, strictParse } from "./json.js";
import { TRUNCATING, TurnError, failed as failedOutcome } from "./protocol.js";
import { SseDecoder } from "./sse.js";

/**
 * One stream's accumulator: buffers keyed by the positional index with the call id kept
 * beside them, fragments appended as opaque text in arrival order (nothing parsed, decoded or
 * trimmed), protocol errors for an unannounced index, a second announcement and a fragment
 * after stop, one strict parse per buffer at the end of the stream.
 */
export class Core {
    schemas = new Map();
    calls = [];
    // By index, so that finding a call is not a scan (quadratic in the calls: the floor
    // `toolcert bench` prices against must not be); a Map, never a plain object keyed by the
    // wire's index. An index is announced once.
    byIndex = new Map();
    stop = null;
    errored = false;
    slots = [];
    constructor(tools, config) {
        if (config.schema) {
            for (const t of tools) {
                if (t.schema !== undefined && t.schema !== null && !this.schemas.has(t.name))
                    this.schemas.set(t.name, t.schema);
            }
        }
    }
    call(index) {
        return this.byIndex.get(index);
    }
    feed(e, out) {
        switch (e.type) {
            case "text_delta": {
                out.text(e.text);
                const last = this.slots[this.slots.length - 1];
                if (last !== undefined && last.slot === "text")
                    last.text += e.text;
                else
                    this.slots.push({ slot: "text", text: e.text });
                return;
            }
            case "call_start": {
                if (this.stop !== null)
                    throw new TurnError("fragment_after_stop", `call ${e.index} announced after the stop`);
                if (this.call(e.index) !== undefined) {
                    throw new TurnError("duplicate_announcement", `index ${e.index} announced twice (as ${e.call_id})`);
                }
                this.slots.push({ slot: "call", call_id: e.call_id });
                const call = { index: e.index, callId: e.call_id, name: e.name, parts: [], stopped: false };
                this.calls.push(call);
                this.byIndex.set(e.index, call);
                return;
            }
            case "args_delta": {
                const call = this.call(e.index);
                if (call === undefined)
                    throw new TurnError("unannounced_index", `fragment for unannounced index ${e.index}`);
                if (call.stopped || this.stop !== null) {
                    throw new TurnError("fragment_after_stop", `fragment for index ${e.index} after its stop`);
                }
                call.parts.push(e.fragment); // append only: no trim, no parse, no decode
                return;
            }
            case "call_stop": {
                const call = this.call(e.index);
                if (call === undefined)
                    throw new TurnError("unannounced_index", `stop for unannounced index ${e.index}`);
                if (call.stopped)
                    throw new TurnError("fragment_after_stop", `index ${e.index} stopped twice`);
                if (e.arguments !== undefined && e.arguments !== null && e.arguments !== call.parts.join("")) {
                    throw new TurnError("done_mismatch", `index ${e.index}: the terminal's arguments differ from the fragments`);
                }
                call.stopped = true;
                return;
            }
            case "stop":
                if (this.stop !== null)
                    throw new TurnError("fragment_after_stop", "a second stop reason");
                this.stop = e.reason;
                return;
            default:
                if (e.type === "error")
                    this.errored = true;
                // error and ping: the stream ends (or goes on) and finish accounts for live calls;
                // foreign blocks (foreign_start, foreign_delta, foreign_stop) are never calls or text.
                return;
        }
    }
    judge(call) {
        const raw = call.parts.join("");
        const failed = (reason) => failedOutcome(reason, call.callId, call.name, raw);
        // Without the stop reason the turn may yet have been cut: never dispatch.
        if (this.stop === null)
            return failed("abandoned");
        if (TRUNCATING.has(this.stop))
            return failed("truncated");
        let args;
        if (raw === "") {
            args = new Map(); // a call with no argument bytes takes no arguments
        }
        else {
            try {
                args = strictParse(raw);
            }
            catch {
                return failed("unparseable");
            }
        }
        const schema = this.schemas.get(call.name);
        const errors = schema === undefined ? [] : schemaErrors(schema, args);
        if (errors.length > 0)
            return { outcome: "schema_error", call_id: call.callId, name: call.name, args, errors };
        return { outcome: "dispatchable", call_id: call.callId, name: call.name, args };
    }
    finish(_end, out) {
        for (const call of this.calls)
            out.outcome(this.judge(call));
        out.layout(this.slots);
        // How the turn ended is what the stream said: no stop reason is made up for a
        // stream that simply stopped.
        let ending = this.errored ? "errored" : "abandoned";
        if (this.stop !== null)
            ending = TRUNCATING.has(this.stop) ? "truncated" : "complete";
        out.ending(ending, this.stop);
    }
}

/** The wire-level factory that decodes the configured dialect with the reference decoders. */
export function wireFromEvents(factory) {
    return (tools, config) => {
        const decoder = DECODERS[config.dialect](config.quirks);
        const inner = factory(tools, config);
        const events = [];
        return {
            feed(unit, out) {
                events.length = 0;
                decoder.decode(unit, events);
                for (const e of events) inner.feed(e, out);
            },
            finish(end, out) {
                inner.finish(end, out);
            },
        };
    };
}

/** The bytes-level factory that decodes SSE and feeds the events to a wire-level accumulator. */
export function bytesFromWire(factory) {
    return (tools, config) => {
        const sse = new SseDecoder();
        const inner = factory(tools, config);
        return {
            feed(chunk, out) {
                const events = [];
                let error = null;
                try {
                    sse.feed(chunk, events);
                } catch (e) {
                    error = e;
                }
                // Events completed before a bad byte are still the stream's.
                for (const ev of events) inner.feed(ev, out);
                if (error !== null) throw error;
            },
            finish(end, out) {
                try {
                    sse.finish();
                } catch (e) {
                    // A character cut by a dropped connection is the drop's doing.
                    if (end === "eof") throw e;
                }
                inner.finish(end, out);
            },
        };
    };
}

/** serve() options feeding an events-level factory at every level. */
export function referenceLevels(factory = (tools, config) => new Core(tools, config)) {
    const wire = wireFromEvents(factory);
    return { events: factory, wire, bytes: bytesFromWire(wire) };
}
