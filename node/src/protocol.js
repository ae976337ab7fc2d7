// The subprocess protocol loop (docs/PROTOCOL.md, version 1), the adapter's side.
//
// toolcert starts the adapter, sends one JSON request per line on stdin (start, configure,
// run, stop) and reads one reply per line on stdout. `serve` answers them: it declares the
// implementation, keeps the configured setting, feeds each stream of a case to a fresh
// accumulator from the factory of the configured level, in the order the case gives, stamps
// every outcome and error with the units delivered so far, and writes the results.
//
// An accumulator is any object with `feed(unit, out)` and `finish(end, out)`, made by a
// factory `(tools, config) => accumulator` once per stream: at the events level `unit` is a
// neutral event, at the wire level an SSE event `{event, data, id}` of `config.dialect`, at
// the bytes level the transport chunk as a `Uint8Array` (the loop decodes the protocol's
// text and base64 payloads). It reports through `out` (an `Emit`), throws `TurnError` to
// fail the turn, throws `Skip` to skip the case; any other exception is that stream's crash.

import * as readline from "node:readline";

import { encode } from "./json.js";
import { PollutionWatch, defaultWatch } from "./pollution.js";

export const PROTOCOL_VERSION = 1;
export const LEVELS = Object.freeze(["events", "wire", "bytes"]);
export const DIALECTS = Object.freeze(["anthropic", "openai-chat", "openai-responses", "gemini"]);
/** Dialects an adapter may declare at the bytes level only: binary framing (AWS event stream),
 * which this package has no reference decoder for; never declared by default. */
export const BYTES_ONLY_DIALECTS = Object.freeze(["bedrock"]);
/** The quirks an adapter declares, each checked against `QUIRKS`. */
function declaredQuirks(quirks) {
    for (const q of quirks) {
        if (!QUIRKS.includes(q)) {
            throw new Error(`unknown quirk ${JSON.stringify(q)} (one of ${QUIRKS.join(", ")})`);
        }
    }
    return [...quirks];
}
/** The caps an adapter declares, each checked against `CAPS`; undefined when none. */
function declaredCaps(caps) {
    if (caps === undefined || caps === null) return undefined;
    if (typeof caps !== "object" || Array.isArray(caps)) {
        throw new TypeError(`caps must be an object {name: count}, not ${JSON.stringify(caps)}`);
    }
    const declared = {};
    for (const [c, n] of Object.entries(caps)) {
        if (!CAPS.includes(c)) {
            throw new TypeError(`unknown cap ${JSON.stringify(c)} (one of ${CAPS.join(", ")})`);
        }
        // Safe integers only: a larger number would not be written as a JSON integer.
        if (!Number.isSafeInteger(n) || n < 0) {
            throw new TypeError(`cap ${JSON.stringify(c)} must be a non-negative integer, not ${String(n)}`);
        }
        declared[c] = n;
    }
    return Object.keys(declared).length > 0 ? declared : undefined;
}

// Every wire behaviour of the server profiles (docs/SPEC.md, "Server profiles"): what
// `serve({quirks})` may declare. toolcert runs a profile only when the adapter declares all
// its behaviours; an adapter that hands the bytes to an SDK declares them all (an SDK reads
// whatever comes), one with its own decoder declares those it reads.
export const QUIRKS = Object.freeze([
    "chat_index_zero",
    "chat_repeat_fields",
    "chat_repeat_id",
    "chat_empty_continuations",
    "chat_no_index",
    "chat_whole_calls",
    "chat_sparse_index",
    "chat_split_entries",
    "chat_repeat_on_finish",
    "chat_content_filters",
    "chat_late_name",
    "responses_done_only",
    "responses_rotating_item_id",
    "responses_hosted_items",
    "anthropic_input_in_start",
    "anthropic_content_in_start",
    "gemini_partial_args",
    "hostile",
]);
/** The protocol's turn error classes: compared by class, never by message. */
export const ERROR_CLASSES = Object.freeze([
    "unannounced_index",
    "duplicate_announcement",
    "fragment_after_stop",
    "done_mismatch",
    "malformed",
    "upstream",
    "truncated",
    "incomplete",
    "limit",
    "other",
]);
/** The caps `serve({caps})` may declare (docs/PROTOCOL.md, "Caps."): a stream past one may be
 * refused with a turn error of class `limit`. */
export const CAPS = Object.freeze(["calls", "argument_bytes", "fragments", "depth"]);
/** Stop reasons that say the output was cut: nothing of such a turn may be dispatched. */
export const TRUNCATING = new Set(["max_tokens", "refusal", "length", "content_filter", "incomplete"]);
/** How a turn can end, as an accumulator says it (`Emit.ending`). */
export const ENDINGS = Object.freeze(["complete", "truncated", "abandoned", "errored"]);

/** Fails the whole turn (the stream ends here). `cls` is one of `ERROR_CLASSES`. */
export class TurnError extends Error {
    cls;
    detail;
    constructor(cls, detail) {
        if (!ERROR_CLASSES.includes(cls)) {
            throw new TypeError(`${JSON.stringify(cls)} is not a turn error class (one of ${ERROR_CLASSES.join(", ")})`);
        }
        super(`${cls}: ${detail}`);
        this.cls = cls;
        this.detail = detail;
    }
}

/** The stream could not be read (bad SSE, bad UTF-8, a dialect event missing a field). */
export const malformed = (detail) => new TurnError("malformed", detail);

/** Thrown from a factory, `feed` or `finish`: this adapter cannot run the case. */
export class Skip extends Error {
    reason;
    constructor(reason) {
        super(reason);
        this.reason = reason;
    }
}

/**
 * Where an accumulator reports. Everything is stamped with the number of the stream's units
 * delivered when it was emitted (counting the unit being handled) and whether it came from
 * `finish`.
 */
export class Emit {
    units = 0;
    atFinish = false;
    outcomes = [];
    textPieces = [];
    slots = undefined;
    endingSaid = undefined;
    /** One call's outcome: `dispatchable(...)`, `schemaError(...)` or `failed(...)`. */
    outcome(o) {
        this.outcomes.push({ ...o, units: this.units, at_finish: this.atFinish });
    }
    /** A piece of prose, as it arrives. */
    text(text) {
        this.textPieces.push(text);
    }
    /** Optional: the assembled message's slots in order. */
    layout(slots) {
        this.slots = slots;
    }
    /**
     * Optional: how the turn ended, as your library tells its caller: `ending` one of
     * `ENDINGS`, `stopReason` the stop reason as the provider spelled it, only when the
     * stream carried one (never made up for a stream that simply stopped). Judged by
     * ACC-ENDING; not calling it leaves that rule n/a.
     */
    ending(ending, stopReason = null) {
        if (!ENDINGS.includes(ending)) {
            throw new TypeError(`${JSON.stringify(ending)} is not an ending (one of ${ENDINGS.join(", ")})`);
        }
        this.endingSaid = { ending, stop_reason: stopReason, units: this.units, at_finish: this.atFinish };
    }
}

/** The call finished in a complete turn and its arguments parsed (and meet its schema). */
export const dispatchable = (callId, name, args) => ({ outcome: "dispatchable", call_id: callId, name, args });

/** The arguments parsed but violate the tool's schema (schema profile only). */
export const schemaError = (callId, name, args, errors) => ({
    outcome: "schema_error",
    call_id: callId,
    name,
    args,
    errors: [...errors],
});

/** Nothing to run: `reason` is abandoned, truncated or unparseable; `raw` the buffer as received. */
export function failed(reason, callId, name, raw) {
    if (!["abandoned", "truncated", "unparseable"].includes(reason)) {
        throw new TypeError(`${JSON.stringify(reason)} is not a failure reason (abandoned, truncated, unparseable)`);
    }
    return { outcome: "failed", reason, call_id: callId, name, raw };
}

function bytesOf(p) {
    // A chunk is {text} when its bytes are UTF-8, otherwise {bytes: base64}.
    if (typeof p.text === "string") return Buffer.from(p.text, "utf8");
    return Buffer.from(p.bytes ?? "", "base64");
}

function describe(e) {
    return e instanceof Error ? (e.stack ?? e.message) : String(e);
}

/**
 * Feeds every stream to its own fresh accumulator, step by step in the case's order: `[s, k]`
 * delivers unit k of stream s; `[s, units.length]` ends stream s. A turn error ends a stream
 * (nothing more is fed, finish is not called). Throws `Skip`.
 *
 * When a stream's turn is over (after its finish, its turn error or its crash) the shared
 * prototypes are checked (`options.watch`, a `PollutionWatch`; by default one snapshotted at
 * the first run) and what changed since the last check is that stream's `pollution`.
 */
export function runCase(c, config, factories, options = {}) {
    const watch = options.watch ?? defaultWatch();
    // `options.memory` ({peak}): the heap sampled every 1,024 steps and at the end, its most
    // kept in `peak` (toolcert bench --bounded asks; V8 has no per-run peak to read).
    const memory = options.memory;
    const sample = () => {
        const m = process.memoryUsage();
        memory.peak = Math.max(memory.peak, m.heapUsed + m.external + m.arrayBuffers);
    };
    let step = 0;
    const make = Object.hasOwn(factories, config.level) ? factories[config.level] : undefined;
    if (typeof make !== "function") throw new TypeError(`no factory for the level ${JSON.stringify(config.level)}`);
    const accs = [];
    const emits = [];
    const results = [];
    for (const stream of c.streams) {
        emits.push(new Emit());
        const result = {};
        results.push(result);
        try {
            accs.push(make(stream.tools ?? [], config));
        } catch (e) {
            if (e instanceof Skip) throw e;
            result.crash = describe(e);
            result.pollution = watch.check();
            accs.push(null);
        }
    }
    for (const [s, k] of c.order) {
        if (memory !== undefined && (++step & 1023) === 0) sample();
        const acc = accs[s];
        if (acc === null) continue;
        const out = emits[s];
        const units = c.streams[s].units;
        try {
            if (k < units.length) {
                out.units += 1;
                acc.feed(config.level === "bytes" ? bytesOf(units[k]) : units[k], out);
            } else {
                out.atFinish = true;
                accs[s] = null;
                acc.finish(c.streams[s].end ?? "eof", out);
                // A finish parses whole buffers: what it holds is seen before it is let go.
                if (memory !== undefined) sample();
                results[s].pollution = watch.check();
            }
        } catch (e) {
            if (e instanceof Skip) throw e;
            accs[s] = null;
            if (e instanceof TurnError) {
                results[s].error = { class: e.cls, detail: e.detail, units: out.units, at_finish: out.atFinish };
            } else {
                results[s].crash = describe(e);
            }
            results[s].pollution = watch.check();
        }
    }
    if (memory !== undefined) sample();
    results.forEach((r, s) => {
        const out = emits[s];
        // A stream the order never ended (a malformed case): checked now.
        r.pollution ??= watch.check();
        r.outcomes = out.outcomes;
        r.text = out.textPieces.join("");
        if (out.slots !== undefined) r.layout = out.slots;
        if (out.endingSaid !== undefined) r.ending = out.endingSaid;
    });
    return results;
}

/**
 * Answers toolcert's requests on stdin until `stop` or the end of input. Give a factory for
 * each level your library can be fed at (at least one); `dialects` are those your wire and
 * bytes levels speak, `quirks` the server profiles' wire behaviours they read (`QUIRKS`:
 * all of them, for an SDK that reads whatever comes), `schema: true` only if your
 * accumulator validates arguments against the tool's schema, `caps` the limits your SDK
 * documents (`{calls: 128}`, names from `CAPS`). Resolves when the loop ends.
 */
export function serve(options) {
    const { name, events, wire, bytes } = options;
    // The baseline of the pollution check: the runtime as the adapter left it, SDK imported,
    // before the first request.
    const watch = options.watch instanceof PollutionWatch ? options.watch : new PollutionWatch(options.watch);
    const factories = Object.create(null);
    if (events) factories.events = events;
    if (wire) factories.wire = wire;
    if (bytes) factories.bytes = bytes;
    if (Object.keys(factories).length === 0) {
        throw new TypeError("serve() needs a factory for at least one level (events, wire or bytes)");
    }
    const dialects = [...(options.dialects ?? DIALECTS)];
    for (const d of dialects) {
        if (!DIALECTS.includes(d) && !BYTES_ONLY_DIALECTS.includes(d)) {
            const known = [...DIALECTS, ...BYTES_ONLY_DIALECTS].join(", ");
            throw new TypeError(`unknown dialect ${JSON.stringify(d)} (one of ${known})`);
        }
    }
    const schema = options.schema === true;
    const implementation = {
        name,
        language: options.language ?? "javascript",
        language_version: process.version,
        levels: Object.keys(factories),
        dialects,
        quirks: declaredQuirks(options.quirks ?? []),
        capabilities: schema ? ["schema"] : [],
    };
    if (options.version !== undefined) implementation.version = options.version;
    if (options.homepage !== undefined) implementation.homepage = options.homepage;
    const caps = declaredCaps(options.caps);
    if (caps !== undefined) implementation.caps = caps;
    const input = options.input ?? process.stdin;
    const output = options.output ?? process.stdout;
    let config = { level: "events", dialect: "anthropic", quirks: {}, schema };
    const send = (message) => output.write(encode(message) + "\n");
    const lines = readline.createInterface({ input, crlfDelay: Infinity, terminal: false });
    return new Promise((resolve) => {
        lines.on("close", () => resolve(0));
        lines.on("line", (line) => {
            if (line.trim() === "") return;
            const request = JSON.parse(line);
            switch (request.cmd) {
                case "start":
                    if (request.version !== PROTOCOL_VERSION) {
                        process.stderr.write(`toolcert speaks protocol ${request.version}, this adapter ${PROTOCOL_VERSION}\n`);
                    }
                    send({ version: PROTOCOL_VERSION, implementation });
                    return;
                case "configure": {
                    const { level, dialect } = request;
                    if (typeof level !== "string" || !Object.hasOwn(factories, level)) {
                        send({ ok: false, reason: `level ${JSON.stringify(level)} is not supported` });
                        return;
                    }
                    if (level !== "events" && !dialects.includes(dialect)) {
                        send({ ok: false, reason: `dialect ${JSON.stringify(dialect)} is not supported` });
                        return;
                    }
                    config = {
                        level,
                        dialect,
                        quirks: request.quirks ?? {},
                        schema: schema && (request.profile?.schema ?? true),
                        // Peak heap per run: toolcert bench --bounded asks.
                        memory: request.profile?.memory === true,
                    };
                    send({ ok: true });
                    return;
                }
                case "run":
                    try {
                        // elapsed_ns: the accumulation alone (toolcert bench prices it), not
                        // parsing the request or writing the reply; the process's CPU time, not
                        // the wall clock, so that other work preempting it is not priced.
                        // The pollution check is the package's work, not the subject's: left out.
                        const checking = watch.cpuNs;
                        let memory;
                        if (config.memory) {
                            const m = process.memoryUsage();
                            const held = m.heapUsed + m.external + m.arrayBuffers;
                            memory = { held, peak: held };
                        }
                        const started = process.cpuUsage();
                        const results = runCase(request.case, config, factories, { watch, memory });
                        const used = process.cpuUsage(started);
                        const elapsed = Math.max(1, (used.user + used.system) * 1000 - (watch.cpuNs - checking));
                        const reply = { seq: request.seq, results, elapsed_ns: elapsed };
                        // The most the run held at once over what was held before it (sampled).
                        if (memory !== undefined) reply.peak_bytes = Math.max(0, memory.peak - memory.held);
                        send(reply);
                    } catch (e) {
                        if (e instanceof Skip) {
                            send({ seq: request.seq, skipped: true, reason: e.reason });
                        } else {
                            send({ seq: request.seq, errored: true, context: { message: String(e), traceback: describe(e) } });
                        }
                    }
                    return;
                case "stop":
                    lines.close();
                    if (output === process.stdout) output.write("", () => process.exit(0));
                    return;
                default:
                    process.stderr.write(`unknown command ${JSON.stringify(request.cmd)}\n`);
                    send({
                        seq: request.seq,
                        errored: true,
                        context: { message: `unknown command ${JSON.stringify(request.cmd)}` },
                    });
            }
        });
    });
}
