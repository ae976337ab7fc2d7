// Dialect decoders: one dialect's SSE events -> neutral events. They keep only what routing
// needs (which kind of block an index holds, which id an index was announced with), never
// argument bytes: accumulating is the core's job.
import { TurnError, malformed } from "./protocol.js";
import { MAX_DEPTH } from "./json.js";
// JSON.parse lets through lone surrogates and turns 1e400 into Infinity, which serde_json
// refuses; payloads that could hold either (or nest past serde_json's limit) are checked.
const SUSPECT = /\\u[dD][89abcdefABCDEF]|[eE][+-]?[0-9]{3}|[0-9]{300}/;
const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
function checkTree(v, depth) {
    if (typeof v === "string") {
        if (LONE.test(v))
            throw new Error("lone surrogate");
    }
    else if (typeof v === "number") {
        if (!Number.isFinite(v))
            throw new Error("number out of range");
    }
    else if (typeof v === "object" && v !== null) {
        if (depth + 1 >= MAX_DEPTH)
            throw new Error("nested too deeply");
        for (const [k, x] of Object.entries(v)) {
            if (LONE.test(k))
                throw new Error("lone surrogate");
            checkTree(x, depth + 1);
        }
    }
}
function payload(event, data) {
    let v;
    try {
        v = JSON.parse(data);
        let brackets = 0;
        for (let i = 0; i < data.length && brackets < MAX_DEPTH - 1; i++) {
            const c = data.charCodeAt(i);
            if (c === 0x5b || c === 0x7b)
                brackets++;
        }
        if (brackets >= MAX_DEPTH - 1 || SUSPECT.test(data))
            checkTree(v, 0);
    }
    catch (e) {
        throw malformed(`${event}: data is not JSON: ${e.message}`);
    }
    if (typeof v !== "object" || v === null || Array.isArray(v))
        throw malformed(`${event}: data is not a JSON object`);
    return v;
}
function str(o, key, where, required = false) {
    const v = o[key];
    if (v === undefined || v === null) {
        if (required)
            throw malformed(`${where}: missing field \`${key}\``);
        return null;
    }
    if (typeof v !== "string")
        throw malformed(`${where}: ${key}: expected a string`);
    return v;
}
function u32(o, key, where, required = true) {
    const v = o[key];
    if ((v === undefined || v === null) && !required)
        return null;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > 0xffffffff) {
        throw malformed(`${where}: ${key}: expected an unsigned 32-bit integer`);
    }
    return v;
}
function obj(o, key, where, required = true) {
    const v = o[key];
    if ((v === undefined || v === null) && !required)
        return null;
    if (typeof v !== "object" || v === null || Array.isArray(v))
        throw malformed(`${where}: ${key}: expected an object`);
    return v;
}
function checkType(name, data) {
    const kind = str(data, "type", name);
    if (kind !== null && kind !== name)
        throw malformed(`${name}: type: the data says \`${kind}\` under event \`${name}\``);
}
/** The event's name (its `event:` line, or else its data's `type`) and, when read, its data. */
function nameOf(ev, known) {
    let name;
    let data = null;
    if (ev.event) {
        name = ev.event;
    }
    else {
        data = payload("event without a name", ev.data);
        name = str(data, "type", "event without a name", true);
    }
    if (!known.has(name))
        return null; // event types added after this adapter was written
    data ??= payload(name, ev.data);
    checkType(name, data);
    return [name, data];
}
function skipString(t, i) {
    // The end of the JSON string literal starting at t[i] (a quote).
    for (i += 1;;) {
        const c = t[i];
        if (c === "\\")
            i += 2;
        else if (c === '"')
            return i + 1;
        else
            i += 1;
    }
}
function skipWs(t, i) {
    while (i < t.length && " \t\r\n".includes(t[i]))
        i++;
    return i;
}
function skipValue(t, i) {
    // The end of the JSON value starting at t[i] (the text was checked to be JSON).
    if (t[i] === '"')
        return skipString(t, i);
    if (t[i] === "{" || t[i] === "[") {
        for (let depth = 0;;) {
            const c = t[i];
            if (c === '"') {
                i = skipString(t, i);
                continue;
            }
            if (c === "{" || c === "[")
                depth++;
            else if (c === "}" || c === "]") {
                depth--;
                if (depth === 0)
                    return i + 1;
            }
            i++;
        }
    }
    let j = i;
    while (j < t.length && !",}] \t\r\n".includes(t[j]))
        j++;
    return j;
}
/** The [key or position, start, end] of each member of the object, or element of the array, at t[i]. */
function* items(t, i) {
    const close = t[i] === "{" ? "}" : "]";
    i = skipWs(t, i + 1);
    for (let position = 0; t[i] !== close; position++) {
        let key = position;
        if (close === "}") {
            const end = skipString(t, i);
            key = JSON.parse(t.slice(i, end));
            i = skipWs(t, skipWs(t, end) + 1); // past the colon
        }
        const end = skipValue(t, i);
        yield [key, i, end];
        i = skipWs(t, end);
        if (t[i] === ",")
            i = skipWs(t, i + 1);
    }
}
/**
 * The exact text of the value at `path` (keys, then positions) in the JSON text `t`, as sent:
 * the parsed value has lost its spacing, escapes and number spellings. A key written twice is
 * its last value, as the parse reads it.
 */
function raw(t, path) {
    let [start, end] = [skipWs(t, 0), t.length];
    for (const step of path) {
        let found = null;
        for (const [k, s, e] of items(t, start))
            if (k === step)
                found = [s, e];
        [start, end] = found;
    }
    return t.slice(start, end);
}
/** A tool_use input's argument text: null for no input, `null` or an empty object. */
function toolInput(text) {
    if (text === null || text === "null")
        return null;
    if (text.startsWith("{") && text.slice(1).replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, "") === "}")
        return null;
    return text;
}
const ANTHROPIC_EVENTS = new Set([
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "error",
    "ping",
    "message_start",
    "message_stop",
]);
const ANTHROPIC_STOPS = new Set(["tool_use", "end_turn", "stop_sequence", "max_tokens", "refusal"]);
/** Anthropic Messages. */
export class AnthropicDecoder {
    /** The kind of block each index last started. */
    kinds = new Map();
    /** `message_start` came: another is a second generation spliced in. */
    started = false;
    decode(ev, out) {
        const named = nameOf(ev, ANTHROPIC_EVENTS);
        if (named === null)
            return;
        const [name, data] = named;
        switch (name) {
            case "content_block_start": {
                const index = u32(data, "index", name);
                const block = obj(data, "content_block", name);
                const kind = str(block, "type", `${name}: content_block`, true);
                if (kind === "tool_use") {
                    const input = "input" in block ? raw(ev.data, ["content_block", "input"]) : null;
                    // A call whose start carried its whole input: no delta may add to it.
                    const whole = this.toolUse(name, index, block, input, out);
                    this.kinds.set(index, whole ? "tool_use_whole" : "tool_use");
                }
                else if (kind === "text") {
                    const text = str(block, "text", `${name}: content_block`);
                    if (text)
                        out.push({ type: "text_delta", text });
                    this.kinds.set(index, "text");
                }
                else {
                    this.kinds.set(index, "other");
                }
                return;
            }
            case "content_block_delta": {
                const index = u32(data, "index", name);
                const delta = obj(data, "delta", name);
                const kind = str(delta, "type", `${name}: delta`, true);
                if (kind === "text_delta") {
                    out.push({ type: "text_delta", text: str(delta, "text", `${name}: delta`, true) });
                }
                else if (kind === "input_json_delta" && this.kinds.get(index) !== "other") {
                    // (a server tool's input is no client call: it is skipped)
                    const fragment = str(delta, "partial_json", `${name}: delta`, true);
                    if (this.kinds.get(index) !== "tool_use_whole")
                        out.push({ type: "args_delta", index, fragment });
                    else if (fragment)
                        throw malformed(`${name}: index ${index}: an input_json_delta for a tool_use whose content_block_start carried its whole input`);
                }
                return;
            }
            case "content_block_stop": {
                const index = u32(data, "index", name);
                if (this.kinds.get(index) === "tool_use_whole")
                    this.kinds.set(index, "tool_use"); // stopped: later deltas are the core's to judge
                const kind = this.kinds.get(index);
                if (kind === undefined || kind === "tool_use")
                    out.push({ type: "call_stop", index });
                return;
            }
            case "message_start":
                if (this.started)
                    throw malformed(`${name}: a second message in one stream (another generation spliced in)`);
                this.started = true;
                this.messageStart(name, data, ev.data, out);
                return;
            case "message_delta": {
                const delta = obj(data, "delta", name);
                const reason = str(delta, "stop_reason", `${name}: delta`);
                if (reason !== null) {
                    if (!ANTHROPIC_STOPS.has(reason))
                        throw malformed(`${name}: delta.stop_reason: \`${reason}\` is not a known stop reason`);
                    out.push({ type: "stop", reason });
                }
                return;
            }
            case "error": {
                const error = obj(data, "error", name);
                out.push({ type: "error", message: str(error, "message", `${name}: error`, true) });
                return;
            }
            case "ping":
                out.push({ type: "ping" });
                return;
        }
    }
    /**
     * A tool_use block's announcement and, when its `input` carries the arguments (any JSON but
     * an empty object or `null`), that input's exact text as its one fragment. Whether it did.
     */
    toolUse(name, index, block, input, out) {
        const id = str(block, "id", `${name}: content_block`);
        const callName = str(block, "name", `${name}: content_block`);
        if (id === null || callName === null)
            throw malformed(`${name}: content_block: a tool_use block needs \`id\` and \`name\``);
        out.push({ type: "call_start", index, call_id: id, name: callName });
        const args = toolInput(input);
        if (args !== null)
            out.push({ type: "args_delta", index, fragment: args });
        return args !== null;
    }
    /**
     * Complete blocks in `message_start` (programmatic tool calling), at content indices 0, 1,
     * ...: a tool_use is a whole call, a text block its text, other blocks skipped.
     */
    messageStart(name, data, text, out) {
        const message = data.message;
        const content = typeof message === "object" && message !== null ? message.content : undefined;
        if (content === undefined || content === null)
            return;
        if (!Array.isArray(content))
            throw malformed(`${name}: message.content: expected an array`);
        content.forEach((block, index) => {
            const kind = typeof block === "object" && block !== null ? block.type : undefined;
            if (kind === "tool_use") {
                const input = "input" in block ? raw(text, ["message", "content", index, "input"]) : null;
                this.toolUse(name, index, block, input, out);
                out.push({ type: "call_stop", index });
                this.kinds.set(index, "tool_use");
            }
            else if (kind === "text") {
                const t = str(block, "text", `${name}: content_block`);
                if (t)
                    out.push({ type: "text_delta", text: t });
                this.kinds.set(index, "text");
            }
            else {
                this.kinds.set(index, "other");
            }
        });
    }
}
const CHAT = "chat.completion.chunk";
const CHAT_FINISH = new Set(["tool_calls", "stop", "length", "content_filter"]);
/**
 * OpenAI Chat Completions, every server profile read by one rule (docs/SPEC.md section 3):
 * calls are told apart by id where an entry has one and by index otherwise. A new non-empty id
 * starts a call (at an occupied index too: some servers send index 0 for every call),
 * announced when its name comes (some hosts send it in a later entry; none by the finish is
 * malformed); a known id continues its call; an entry without an id (absent or "")
 * continues the call its index holds, or with no index the latest call. Repeated ids and names
 * are never concatenated; an entry with no argument bytes beside or after the finish reason
 * adds nothing, and a second finish reason is no second stop. A call's neutral index is its
 * announcement ordinal. The quirks are not read: a client cannot know its server.
 */
export class ChatDecoder {
    /** The neutral index of a fragment that continues no call: never a call's ordinal. */
    static NO_CALL = 0xffffffff;
    /** Each call's id, with its ordinal. */
    ids = new Map();
    /** Which call (its ordinal) each wire index holds: the latest announced there. */
    held = new Map();
    /** How many calls were announced. */
    calls = 0;
    finished = false;
    /** Calls whose name has not come yet: ordinal -> [id, argument bytes held for it]. */
    unnamed = new Map();
    constructor(_quirks) { }
    decode(ev, out) {
        if (ev.data === "[DONE]")
            return;
        const chunk = payload(CHAT, ev.data);
        if (chunk.error !== undefined && chunk.error !== null) {
            const error = obj(chunk, "error", CHAT);
            out.push({ type: "error", message: str(error, "message", `${CHAT}: error`, true) });
            return;
        }
        const choices = chunk.choices;
        if (choices === undefined || choices === null) {
            // A usage-only chunk without `choices`, a prelude of content-filter results:
            // bookkeeping (docs/SPEC.md, "Dialect events").
            const present = (v) => v !== undefined && v !== null;
            if (present(chunk.usage) || present(chunk.prompt_filter_results))
                return;
            throw malformed(`${CHAT}: has neither \`choices\` nor \`error\``);
        }
        if (!Array.isArray(choices))
            throw malformed(`${CHAT}: choices: expected an array`);
        for (const choice of choices) {
            if (typeof choice !== "object" || choice === null || Array.isArray(choice))
                throw malformed(`${CHAT}: choices: expected objects`);
            if ((u32(choice, "index", `${CHAT}: choices`, false) ?? 0) !== 0)
                continue; // other completions
            let said = false;
            const reason = str(choice, "finish_reason", `${CHAT}: choices[0]`);
            const delta = obj(choice, "delta", `${CHAT}: choices[0]`, false);
            if (delta !== null) {
                const text = str(delta, "content", `${CHAT}: delta`);
                if (text !== null) {
                    out.push({ type: "text_delta", text });
                    said = true;
                }
                if (str(delta, "refusal", `${CHAT}: delta`) !== null)
                    said = true;
                const entries = delta.tool_calls;
                if (entries !== undefined && entries !== null) {
                    if (!Array.isArray(entries))
                        throw malformed(`${CHAT}: delta.tool_calls: expected an array`);
                    entries.forEach((entry, k) => {
                        if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
                            throw malformed(`${CHAT}: delta.tool_calls[${k}]: expected an object`);
                        }
                        this.entry(k, entry, reason !== null, out);
                        said = true;
                    });
                }
            }
            if (reason !== null) {
                if (!CHAT_FINISH.has(reason))
                    throw malformed(`${CHAT}: finish_reason: \`${reason}\` is not a known finish reason`);
                for (const [heldId] of this.unnamed.values())
                    throw malformed(`${CHAT}: finish_reason: the call ${JSON.stringify(heldId)} never got its function.name`);
                if (!this.finished) {
                    // Some servers send a second finish chunk: one stop.
                    this.finished = true;
                    out.push({ type: "stop", reason });
                }
            }
            else if (!said) {
                out.push({ type: "ping" }); // a chunk that carries nothing is a keep-alive
            }
        }
    }
    entry(k, entry, finishing, out) {
        const where = `${CHAT}: delta.tool_calls[${k}]`;
        const index = u32(entry, "index", where, false); // some servers send none
        const id = str(entry, "id", where) || null; // an empty id is no id
        const fn = obj(entry, "function", where, false) ?? {};
        const name = str(fn, "name", `${where}.function`);
        const args = str(fn, "arguments", `${where}.function`) ?? "";
        if (id !== null && !this.ids.has(id)) {
            const ordinal = this.calls++;
            this.ids.set(id, ordinal);
            if (index !== null)
                this.held.set(index, ordinal);
            if (!name) {
                // The name comes in a later entry (some hosts): the call waits for it.
                this.unnamed.set(ordinal, [id, args]);
                return;
            }
            out.push({ type: "call_start", index: ordinal, call_id: id, name });
            if (args)
                out.push({ type: "args_delta", index: ordinal, fragment: args });
            return;
        }
        let call;
        if (id !== null)
            call = this.ids.get(id); // the same id again: its call
        else if (index !== null)
            call = this.held.get(index);
        else
            call = this.calls > 0 ? this.calls - 1 : undefined;
        if (call !== undefined && this.unnamed.has(call)) {
            const waiting = this.unnamed.get(call);
            if (!name) {
                waiting[1] += args;
                return;
            }
            this.unnamed.delete(call);
            out.push({ type: "call_start", index: call, call_id: waiting[0], name });
            if (waiting[1])
                out.push({ type: "args_delta", index: call, fragment: waiting[1] });
        }
        if (call === undefined)
            out.push({ type: "args_delta", index: ChatDecoder.NO_CALL, fragment: args });
        else if (args || !(finishing || this.finished))
            out.push({ type: "args_delta", index: call, fragment: args });
    }
}
const RESPONSES_EVENTS = new Set([
    "response.output_item.added",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.output_text.delta",
    "response.failed",
    "error",
    "response.completed",
    "response.incomplete",
    "response.in_progress",
    "response.output_item.done",
    "response.created",
]);
/**
 * OpenAI Responses. Calls are keyed by `output_index` alone (an `item_id`, which some servers
 * change on every event, is never read). Per output index of a call: null while its deltas
 * stream, then the arguments its first `done` repeated (to read its `output_item.done`:
 * docs/SPEC.md, WIRE-DONE).
 */
export class ResponsesDecoder {
    calls = new Map();
    /**
     * The indices argument bytes came for (a delta, or the announcement's arguments): a `done`
     * with none before it carries the call's arguments (LM Studio sends no delta).
     */
    bytes = new Set();
    /** `response.created` came: another is a second generation spliced in. */
    created = false;
    itemDone(name, index, item, out) {
        const args = str(item, "arguments", `${name}: item`);
        if (!this.calls.has(index)) {
            // The call's only event: announcement, whole arguments and terminal at once.
            const id = str(item, "call_id", `${name}: item`);
            const callName = str(item, "name", `${name}: item`);
            if (id === null || callName === null || args === null)
                throw malformed(`${name}: item: a function_call item needs \`call_id\`, \`name\` and \`arguments\``);
            out.push({ type: "call_start", index, call_id: id, name: callName });
            if (args)
                out.push({ type: "args_delta", index, fragment: args });
            out.push({ type: "call_stop", index, arguments: null });
            this.calls.set(index, args);
            this.bytes.add(index);
        }
        else if (this.calls.get(index) !== null) {
            // A second repeat of the arguments: it must say what the first said.
            if (args !== null && args !== this.calls.get(index))
                throw new TurnError("done_mismatch", `${name}: item.arguments differ from function_call_arguments.done's`);
        }
        else {
            // No `function_call_arguments.done`: this is the terminal, which carries the
            // arguments when no bytes came before it, else repeats them.
            if (!this.bytes.has(index) && args)
                out.push({ type: "args_delta", index, fragment: args });
            this.calls.set(index, args ?? "");
            this.bytes.add(index);
            out.push({ type: "call_stop", index, arguments: args });
        }
    }
    decode(ev, out) {
        const named = nameOf(ev, RESPONSES_EVENTS);
        if (named === null)
            return;
        const [name, data] = named;
        switch (name) {
            case "response.created":
                if (this.created)
                    throw malformed(`${name}: a second response in one stream (another generation spliced in)`);
                this.created = true;
                return;
            case "response.output_item.added": {
                const index = u32(data, "output_index", name);
                const item = obj(data, "item", name);
                // An item of another type (a hosted tool's, whatever its fields hold) is skipped.
                if (item.type === "function_call") {
                    const id = str(item, "call_id", `${name}: item`);
                    const callName = str(item, "name", `${name}: item`);
                    if (id === null || callName === null)
                        throw malformed(`${name}: item: a function_call item needs \`call_id\` and \`name\``);
                    out.push({ type: "call_start", index, call_id: id, name: callName });
                    this.calls.set(index, null);
                    const args = str(item, "arguments", `${name}: item`);
                    if (args) {
                        out.push({ type: "args_delta", index, fragment: args });
                        this.bytes.add(index);
                    }
                }
                return;
            }
            case "response.output_item.done": {
                const index = u32(data, "output_index", name);
                const item = obj(data, "item", name);
                if (item.type === "function_call")
                    this.itemDone(name, index, item, out);
                return;
            }
            case "response.function_call_arguments.delta": {
                const index = u32(data, "output_index", name);
                out.push({ type: "args_delta", index, fragment: str(data, "delta", name, true) });
                this.bytes.add(index);
                return;
            }
            case "response.function_call_arguments.done": {
                const index = u32(data, "output_index", name);
                const args = str(data, "arguments", name, true);
                if (this.calls.has(index) && !this.bytes.has(index) && args)
                    out.push({ type: "args_delta", index, fragment: args });
                this.calls.set(index, args);
                this.bytes.add(index);
                out.push({ type: "call_stop", index, arguments: args });
                return;
            }
            case "response.output_text.delta":
                out.push({ type: "text_delta", text: str(data, "delta", name, true) });
                return;
            case "response.failed": {
                const response = obj(data, "response", name);
                const error = obj(response, "error", `${name}: response`, false);
                const message = error === null ? "the response failed" : str(error, "message", `${name}: response.error`, true);
                out.push({ type: "error", message });
                return;
            }
            case "error":
                out.push({ type: "error", message: str(data, "message", name, true) });
                return;
            case "response.completed":
                out.push({ type: "stop", reason: "completed" });
                return;
            case "response.incomplete":
                out.push({ type: "stop", reason: "incomplete" });
                return;
            default:
                out.push({ type: "ping" }); // a status event with nothing new
        }
    }
}

// Gemini `streamGenerateContent`: calls carry no index; a call's arguments come whole (`args`,
// an object) or, under Vertex's streamed arguments, as typed values at JSON paths, turned here
// into the argument text they add (docs/SPEC.md "Gemini: arguments by JSON path").
function geminiPath(path, where) {
    const bad = (why) => malformed(`${where}: jsonPath \`${path}\` ${why}`);
    if (!path.startsWith("$"))
        throw bad("does not start with `$`");
    const steps = [];
    let i = 1;
    while (i < path.length) {
        if (steps.length >= 256)
            throw bad("is too deep");
        const c = path[i];
        if (c === ".") {
            let j = i + 1;
            while (j < path.length && path[j] !== "." && path[j] !== "[")
                j++;
            if (j === i + 1)
                throw bad("has an empty member name");
            steps.push(path.slice(i + 1, j));
            i = j;
        }
        else if (c === "[" && (path[i + 1] === "'" || path[i + 1] === '"')) {
            const q = path[i + 1];
            let j = i + 2;
            let name = "";
            while (j < path.length && path[j] !== q) {
                if (path[j] === "\\" && j + 1 < path.length) {
                    const e = path[j + 1];
                    if (e === "u") {
                        const hexits = path.slice(j + 2, j + 6);
                        const code = /^[0-9a-fA-F]{4}$/.test(hexits) ? parseInt(hexits, 16) : -1;
                        if (code < 0 || (code >= 0xd800 && code <= 0xdfff))
                            throw bad("has a malformed `[...]` step");
                        name += String.fromCharCode(code);
                        j += 6;
                        continue;
                    }
                    name += { b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" }[e] ?? e;
                    j += 2;
                }
                else {
                    name += path[j];
                    j++;
                }
            }
            if (path[j + 1] !== "]")
                throw bad("has a malformed `[...]` step");
            steps.push(name);
            i = j + 2;
        }
        else if (c === "[") {
            const j = path.indexOf("]", i);
            const digits = j > 0 ? path.slice(i + 1, j) : "";
            if (!/^[0-9]{1,9}$/.test(digits))
                throw bad("has a malformed `[...]` step");
            steps.push(Number(digits));
            i = j + 1;
        }
        else
            throw bad("has a step that is neither `.name` nor `[...]`");
    }
    return steps;
}
const sameStep = (a, b) => a === b;
class GeminiWriter {
    constructor() {
        this.open = []; // {array, seg, members, last}
        this.string = null;
    }
    piece(path, kind, text, last, where) {
        let out = "";
        if (this.string !== null) {
            if (kind === "str" && this.string.length === path.length && this.string.every((s, k) => sameStep(s, path[k]))) {
                out += text;
                if (last) {
                    out += '"';
                    this.string = null;
                }
                return out;
            }
            out += '"';
            this.string = null;
        }
        if (path.length === 0)
            throw malformed(`${where}: a value at \`$\` itself`);
        const parents = path.slice(0, -1);
        const member = path[path.length - 1];
        if (this.open.length === 0) {
            out += "{";
            this.open.push({ array: false, seg: null, members: 0, last: null });
        }
        let same = 0;
        while (same < parents.length && same + 1 < this.open.length && sameStep(this.open[same + 1].seg, parents[same]))
            same++;
        while (this.open.length > same + 1)
            out += this.close();
        for (let k = same; k < parents.length; k++) {
            out += this.member(parents[k], where);
            const next = k + 1 < parents.length ? parents[k + 1] : member;
            const array = typeof next === "number";
            out += array ? "[" : "{";
            this.open.push({ array, seg: parents[k], members: 0, last: null });
        }
        out += this.member(member, where);
        this.open[this.open.length - 1].last = member;
        if (kind === "str") {
            out += '"' + text;
            if (last)
                out += '"';
            else
                this.string = [...path];
        }
        else
            out += text;
        return out;
    }
    member(seg, where) {
        const top = this.open[this.open.length - 1];
        if (sameStep(top.last, seg))
            throw malformed(`${where}: the path goes back to a member already written`);
        let out = "";
        if (!top.array && typeof seg === "string") {
            if (top.members)
                out += ",";
            out += JSON.stringify(seg) + ":";
        }
        else if (top.array && typeof seg === "number" && seg === top.members) {
            if (top.members)
                out += ",";
        }
        else
            throw malformed(`${where}: a path step of the wrong kind or out of order`);
        top.members++;
        return out;
    }
    close() {
        const o = this.open.pop();
        if (this.open.length)
            this.open[this.open.length - 1].last = o.seg;
        return o.array ? "]" : "}";
    }
    end() {
        let out = "";
        if (this.string !== null) {
            out += '"';
            this.string = null;
        }
        while (this.open.length)
            out += this.close();
        return out;
    }
}
// A Map, not an object literal: `finishReason` is the server's word, and "__proto__",
// "constructor" or "toString" looked up in a plain object finds Object.prototype's members (a
// turn "stopped" with an object, read as complete instead of cut, or a reply that cannot be
// written).
const GEMINI_STOPS = new Map([["STOP", "stop"], ["MAX_TOKENS", "max_tokens"], ["PROHIBITED_CONTENT", "refusal"], ["BLOCKLIST", "refusal"], ["SPII", "refusal"]]);
export class GeminiDecoder {
    constructor() {
        this.calls = 0;
        this.live = null; // [ordinal, writer]
    }
    endLive(out) {
        if (this.live === null)
            return;
        const [index, w] = this.live;
        this.live = null;
        const text = w.end();
        if (text)
            out.push({ type: "args_delta", index, fragment: text });
        out.push({ type: "call_stop", index });
    }
    decode(ev, out) {
        const data = ev.data ?? "";
        if (!data.trim())
            return;
        const where = "gemini chunk";
        // Not the strict payload reader: a string piece may end inside a surrogate pair, and
        // every value is read from the text as sent anyway.
        let chunk;
        try {
            chunk = JSON.parse(data);
        }
        catch (e) {
            throw malformed(`${where}: data is not JSON: ${e.message}`);
        }
        if (typeof chunk !== "object" || chunk === null || Array.isArray(chunk))
            throw malformed(`${where}: data is not a JSON object`);
        if (chunk.error && typeof chunk.error === "object") {
            out.push({ type: "error", message: String(chunk.error.message ?? "") });
            return;
        }
        const cands = chunk.candidates;
        if (!Array.isArray(cands) || cands.length === 0) {
            out.push({ type: "ping" });
            return;
        }
        const cand = cands[0];
        if (typeof cand !== "object" || cand === null)
            throw malformed(`${where}: candidates[0]: expected an object`);
        const parts = (cand.content && cand.content.parts) || [];
        if (!Array.isArray(parts))
            throw malformed(`${where}: parts: expected an array`);
        parts.forEach((part, p) => {
            if (typeof part !== "object" || part === null)
                throw malformed(`${where}: parts[${p}]: expected an object`);
            const fc = part.functionCall;
            if (fc && typeof fc === "object")
                this.call(data, p, fc, out);
            else if (typeof part.text === "string" && !part.thought && part.text)
                out.push({ type: "text_delta", text: part.text });
        });
        if (typeof cand.finishReason === "string") {
            this.endLive(out);
            out.push({ type: "stop", reason: GEMINI_STOPS.get(cand.finishReason) ?? "content_filter" });
        }
        else if (parts.length === 0)
            out.push({ type: "ping" });
    }
    pieces(data, p, fc, w, where) {
        let text = "";
        const args = fc.partialArgs || [];
        if (!Array.isArray(args))
            throw malformed(`${where}: partialArgs: expected an array`);
        // Each entry's text found in one pass over the array (a chunk may carry thousands).
        let spans = [];
        if (args.length) {
            const listed = raw(data, ["candidates", 0, "content", "parts", p, "functionCall", "partialArgs"]);
            spans = [...items(listed, 0)].map(([, s, e]) => listed.slice(s, e));
        }
        args.forEach((arg, j) => {
            const at = `${where}: partialArgs[${j}]`;
            if (typeof arg !== "object" || arg === null)
                throw malformed(`${at}: expected an object`);
            const path = geminiPath(str(arg, "jsonPath", at, true), at);
            const entry = spans[j];
            const last = !arg.willContinue;
            if ("stringValue" in arg) {
                if (typeof arg.stringValue !== "string")
                    throw malformed(`${at}: stringValue: expected a string`);
                text += w.piece(path, "str", raw(entry, ["stringValue"]).slice(1, -1), last, at);
            }
            else if ("numberValue" in arg) {
                const n = raw(entry, ["numberValue"]);
                if (!/^-?[0-9]/.test(n))
                    throw malformed(`${at}: numberValue: expected a number`);
                text += w.piece(path, "scalar", n, true, at);
            }
            else if ("boolValue" in arg)
                text += w.piece(path, "scalar", arg.boolValue ? "true" : "false", true, at);
            else if ("nullValue" in arg)
                text += w.piece(path, "scalar", "null", true, at);
            else
                throw malformed(`${at}: no value`);
        });
        return text;
    }
    call(data, p, fc, out) {
        const where = `gemini chunk: parts[${p}].functionCall`;
        const name = str(fc, "name", where);
        if (name) {
            this.endLive(out);
            const ordinal = this.calls++;
            const callId = str(fc, "id", where) || `call_${ordinal}`;
            out.push({ type: "call_start", index: ordinal, call_id: callId, name });
            if (fc.args !== undefined && fc.args !== null) {
                const a = raw(data, ["candidates", 0, "content", "parts", p, "functionCall", "args"]);
                if (!a.startsWith("{"))
                    throw malformed(`${where}: args: expected an object`);
                out.push({ type: "args_delta", index: ordinal, fragment: a });
            }
            const w = new GeminiWriter();
            this.live = [ordinal, w];
            const text = this.pieces(data, p, fc, w, where);
            if (text)
                out.push({ type: "args_delta", index: ordinal, fragment: text });
            if (!fc.willContinue)
                this.endLive(out);
            return;
        }
        if (this.live === null) {
            if (!fc.partialArgs?.length && (fc.args === undefined || fc.args === null))
                return;
            const text = this.pieces(data, p, fc, new GeminiWriter(), where);
            out.push({ type: "args_delta", index: Math.max(this.calls - 1, 0), fragment: text });
            return;
        }
        const [index, w] = this.live;
        const text = this.pieces(data, p, fc, w, where);
        if (text)
            out.push({ type: "args_delta", index, fragment: text });
        if (!fc.willContinue)
            this.endLive(out);
    }
}
export const DIALECTS = {
    anthropic: () => new AnthropicDecoder(),
    "openai-chat": (quirks) => new ChatDecoder(quirks),
    "openai-responses": () => new ResponsesDecoder(),
    gemini: () => new GeminiDecoder(),
};
