// Hostile-tier mutant: an OpenAI Chat accumulator (wire level) that assembles the message as
// the API shapes it, merging each delta's plain fields (role, refusal, ...) into it with
// `Object.assign(message, fields)`, and dispatches `message.tool_calls` at the end. Against
// every honest server it is correct (it reads the wire as the package's reference decoder
// does); a hostile one that puts an own `"__proto__"` member in a delta (JSON.parse makes it
// one) gets it through `Object.assign`'s [[Set]] to the `__proto__` setter: the message's
// prototype becomes the server's object, and its `tool_calls` (a forged call) is what
// `message.tool_calls ??= []` finds and the accumulator dispatches, beside the real calls.
//
//     toolcert certify --subject 'exec:node node/examples/hostile/assign.mjs' --level wire --dialect openai-chat
import { fileURLToPath } from "node:url";

import { QUIRKS, TurnError, malformed, serve } from "toolcert-adapter";

import { FINISH, chunkOf, ending, judge } from "./common.mjs";

export function assign() {
    const message = { role: null, content: null }; // the assembled assistant message
    const ids = new Map(); // id -> call (in the message's shape)
    const pending = new Map(); // id -> a call whose function.name has not come yet
    const slots = [];
    let stop = null;
    let errored = false;
    const announce = (call) => {
        if (stop !== null) throw new TurnError("fragment_after_stop", `call ${call.id} announced after the finish`);
        pending.delete(call.id);
        (message.tool_calls ??= []).push(call);
        slots.push({ slot: "call", call_id: call.id });
    };
    const entry = (e) => {
        const id = typeof e.id === "string" && e.id !== "" ? e.id : null;
        const fn = e.function ?? {};
        const name = fn.name || null;
        const args = fn.arguments ?? "";
        if (id !== null && !ids.has(id)) {
            const call = { index: e.index, id, type: "function", function: { name, arguments: args } };
            ids.set(id, call);
            if (name) announce(call);
            else pending.set(id, call);
            return;
        }
        let call;
        const calls = [...(message.tool_calls ?? []), ...pending.values()];
        if (id !== null) call = ids.get(id);
        else if (e.index !== undefined && e.index !== null) call = calls.findLast((c) => c.index === e.index);
        else call = message.tool_calls?.at(-1);
        if (call === undefined) throw new TurnError("unannounced_index", `a fragment for index ${e.index}, which no call holds`);
        if (pending.has(call.id)) {
            call.function.arguments += args;
            if (name) {
                call.function.name = name;
                announce(call);
            }
            return;
        }
        if (args && stop !== null) throw new TurnError("fragment_after_stop", `arguments for ${call.id} after the finish`);
        call.function.arguments += args;
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
                const { content, tool_calls, ...fields } = choice.delta ?? {};
                Object.assign(message, fields); // THE BUG: role, refusal, ... and an own "__proto__"
                if (typeof content === "string") {
                    message.content = (message.content ?? "") + content;
                    out.text(content);
                    const last = slots[slots.length - 1];
                    if (last?.slot === "text") last.text += content;
                    else slots.push({ slot: "text", text: content });
                }
                for (const e of tool_calls ?? []) entry(e);
                if (reason !== null) {
                    if (!FINISH.has(reason)) throw malformed(`finish_reason: \`${reason}\` is not a known finish reason`);
                    for (const id of pending.keys()) throw malformed(`the call ${id} never got its function.name`);
                    stop ??= reason;
                }
            }
        },
        finish(_end, out) {
            for (const call of message.tool_calls ?? []) {
                out.outcome(judge({ id: call.id, name: call.function.name, args: call.function.arguments }, stop));
            }
            out.layout(slots);
            ending(out, stop, errored);
        },
    };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
    await serve({ name: "hostile-assign", wire: assign, dialects: ["openai-chat"], quirks: QUIRKS });
}
