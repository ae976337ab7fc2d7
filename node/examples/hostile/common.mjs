// What the two hostile-tier mutants share: reading a Chat chunk, judging a call at the end.
// None of this is the bug; each mutant's bug is in its own file.
import { TRUNCATING, dispatchable, failed, malformed, strictParse } from "toolcert-adapter";

export const FINISH = new Set(["tool_calls", "stop", "length", "content_filter"]);

/**
 * A chunk's data as JSON.parse reads it (as an SDK does: a "__proto__" key is an own
 * property), once the package's strict parse has said it is JSON (no lone surrogates, no
 * 1e400): the mutants fail only on the hostile keys.
 */
export function chunkOf(data) {
    try {
        strictParse(data);
    } catch (e) {
        throw malformed(`chat.completion.chunk: data is not JSON: ${e.message}`);
    }
    const chunk = JSON.parse(data);
    if (typeof chunk !== "object" || chunk === null || Array.isArray(chunk)) throw malformed("chat.completion.chunk: data is not a JSON object");
    return chunk;
}

/** The outcome of a call `{id, name, args}` in a turn that stopped with `stop` (null: never). */
export function judge(call, stop) {
    const raw = call.args;
    if (stop === null) return failed("abandoned", call.id, call.name, raw);
    if (TRUNCATING.has(stop)) return failed("truncated", call.id, call.name, raw);
    if (raw === "") return dispatchable(call.id, call.name, new Map());
    try {
        return dispatchable(call.id, call.name, strictParse(raw));
    } catch {
        return failed("unparseable", call.id, call.name, raw);
    }
}

/** How the turn ended, as the reference says it. */
export function ending(out, stop, errored) {
    if (stop !== null) out.ending(TRUNCATING.has(stop) ? "truncated" : "complete", stop);
    else out.ending(errored ? "errored" : "abandoned", null);
}
