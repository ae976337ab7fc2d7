// Hostile-tier mutant: an OpenAI Chat accumulator (wire level) that keeps its calls in a
// plain object indexed by the wire's `index` as sent. Against every honest server it is
// correct (it reads the wire as the package's reference decoder does); a hostile one that
// sends `"index": "__proto__"` makes `calls[entry.index]` Object.prototype, and the call's
// id, name and arguments are written there: every object in the process then has them
// (HOSTILE-POLLUTION), and the forged "call" is dispatched.
//
//     toolcert certify --subject 'exec:node node/examples/hostile/indexed.mjs' --level wire --dialect openai-chat
import { fileURLToPath } from "node:url";

import { QUIRKS, TurnError, malformed, serve } from "toolcert-adapter";

import { FINISH, chunkOf, ending, judge } from "./common.mjs";

export function indexed() {
    const calls = {}; // THE BUG: wire index (whatever the server sent) -> call, in a plain object
    const ids = new Map(); // id -> call
    const list = []; // the named calls, in announcement order
    const slots = [];
    let stop = null;
    let errored = false;
    const announce = (call) => {
        if (stop !== null) throw new TurnError("fragment_after_stop", `call ${call.id} announced after the finish`);
        call.announced = true;
        list.push(call);
        slots.push({ slot: "call", call_id: call.id });
    };
    const entry = (e) => {
        const id = typeof e.id === "string" && e.id !== "" ? e.id : null;
        const fn = e.function ?? {};
        const name = fn.name || null;
        const args = fn.arguments ?? "";
        let call;
        if (id !== null && !ids.has(id)) {
            // A new call. Some servers reuse an index for the next call: a new id there is a new call.
            if (e.index === undefined || e.index === null) call = { id: null };
            else {
                call = calls[e.index] ??= { id: null, name: null, arguments: "", announced: false };
                if (call.id !== null && call.id !== undefined) call = calls[e.index] = { id: null };
            }
            call.id = id;
            call.name = name;
            call.arguments = args;
            call.announced = false;
            ids.set(id, call);
            if (name) announce(call);
            return;
        }
        if (id !== null) call = ids.get(id);
        else if (e.index !== undefined && e.index !== null) call = calls[e.index];
        else call = list[list.length - 1];
        if (call === undefined) throw new TurnError("unannounced_index", `a fragment for index ${e.index}, which no call holds`);
        if (!call.announced) {
            call.arguments += args;
            if (name) {
                call.name = name;
                announce(call);
            }
            return;
        }
        if (args && stop !== null) throw new TurnError("fragment_after_stop", `arguments for ${call.id} after the finish`);
        call.arguments += args;
    };
    return {
        feed(ev, out) {
            if (ev.data === "[DONE]") return;
            const chunk = chunkOf(ev.data);
            if (chunk.error !== undefined && chunk.error !== null) {
                errored = true;
                return;
            }
            if (chunk.choices === undefined || chunk.choices === null) {
                if (chunk.usage != null || chunk.prompt_filter_results != null) return;
                throw malformed("chat.completion.chunk: has neither `choices` nor `error`");
            }
            if (!Array.isArray(chunk.choices)) throw malformed("chat.completion.chunk: choices: expected an array");
            for (const choice of chunk.choices) {
                if (typeof choice !== "object" || choice === null) throw malformed("choices: expected objects");
                if ((choice.index ?? 0) !== 0) continue;
                const reason = choice.finish_reason ?? null;
                const delta = choice.delta ?? {};
                if (typeof delta.content === "string") {
                    out.text(delta.content);
                    const last = slots[slots.length - 1];
                    if (last?.slot === "text") last.text += delta.content;
                    else slots.push({ slot: "text", text: delta.content });
                }
                for (const e of delta.tool_calls ?? []) entry(e);
                if (reason !== null) {
                    if (!FINISH.has(reason)) throw malformed(`finish_reason: \`${reason}\` is not a known finish reason`);
                    for (const call of ids.values()) if (!call.announced) throw malformed(`the call ${call.id} never got its function.name`);
                    stop ??= reason;
                }
            }
        },
        finish(_end, out) {
            for (const call of list) out.outcome(judge({ id: call.id, name: call.name, args: call.arguments }, stop));
            out.layout(slots);
            ending(out, stop, errored);
        },
    };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
    await serve({ name: "hostile-indexed", wire: indexed, dialects: ["openai-chat"], quirks: QUIRKS });
}
