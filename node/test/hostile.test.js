// The hostile-upstream tier: "__proto__" as a tool-call index, and as a delta's own member.
// The two mutants of examples/hostile/ must be caught (pollution reported, a forged call
// dispatched); the package's reference (src/floor.js, `referenceLevels`) and the events-level
// example adapter must stay clean. Mutants run as subprocesses: what they pollute stays there.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

import { PollutionWatch, encode, runCase, strictParse } from "../src/index.js";
import { referenceLevels } from "../src/reference.js";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

/** SSE events of OpenAI Chat, one per payload, as the wire level carries them. */
const sse = (...payloads) => payloads.map((p) => ({ event: null, data: typeof p === "string" ? p : JSON.stringify(p), id: null }));
const chunk = (delta, finish = null) => ({ id: "chatcmpl-1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] });

const CLEAN = sse(
    chunk({ role: "assistant", content: "" }),
    chunk({ tool_calls: [{ index: 0, id: "call_real", type: "function", function: { name: "lookup", arguments: "" } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: "1}" } }] }),
    chunk({}, "tool_calls"),
    "[DONE]",
);
// (a) a call whose index is "__proto__"
const PROTO_INDEX = sse(
    chunk({ role: "assistant", content: "" }),
    chunk({ tool_calls: [{ index: "__proto__", id: "call_1", type: "function", function: { name: "lookup", arguments: "" } }] }),
    chunk({ tool_calls: [{ index: "__proto__", function: { arguments: '{"q":1}' } }] }),
    chunk({}, "tool_calls"),
    "[DONE]",
);
// (b) a delta with an own "__proto__" member (written as text: JSON.stringify of an object
// literal would have set its prototype instead), then a real call
const FORGED = '{"tool_calls":[{"index":0,"id":"call_forged","type":"function","function":{"name":"forged","arguments":"{}"}}]}';
const PROTO_DELTA = [
    ...sse(`{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"","__proto__":${FORGED}},"finish_reason":null}]}`),
    ...CLEAN.slice(1),
];

const stream = (units) => ({ tools: [{ name: "lookup" }], units, end: "eof" });
const kase = (...units) => {
    const streams = units.map(stream);
    const order = streams.flatMap((s, i) => [...Array(s.units.length + 1).keys()].map((k) => [i, k]));
    return { streams, order };
};

/** Speaks the protocol to `node file` at the wire level of openai-chat; the run replies. */
function converse(file, ...cases) {
    const requests = [
        { cmd: "start", version: 1, toolcert: "test" },
        { cmd: "configure", level: "wire", dialect: "openai-chat", quirks: { chat_index_zero: false }, profile: { schema: false } },
        ...cases.map((c, k) => ({ cmd: "run", seq: k + 1, case: c })),
        { cmd: "stop" },
    ];
    const r = spawnSync(process.execPath, [file], { input: requests.map((q) => JSON.stringify(q) + "\n").join(""), encoding: "utf8", timeout: 30000 });
    assert.equal(r.status, 0, r.stderr);
    const [start, configured, ...runs] = r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l));
    assert.equal(start.version, 1);
    assert.deepEqual(configured, { ok: true });
    return runs;
}

const dispatched = (result) => result.outcomes.filter((o) => o.outcome === "dispatchable").map((o) => o.call_id);

test("indexed mutant: a __proto__ index pollutes Object.prototype, reported once at its stream", () => {
    const [first, second] = converse(here("../examples/hostile/indexed.mjs"), kase(CLEAN, PROTO_INDEX), kase(CLEAN));
    const [clean, hostile] = first.results;
    assert.deepEqual(clean.pollution, []);
    assert.deepEqual(dispatched(clean), ["call_real"]);
    for (const name of ["Object.prototype.id", "Object.prototype.name", "Object.prototype.arguments"]) {
        assert.ok(hostile.pollution.includes(name), `${name} in ${JSON.stringify(hostile.pollution)}`);
    }
    // Reported once: the next run's stream is checked against the polluted runtime.
    assert.deepEqual(second.results[0].pollution, []);
});

test("indexed mutant is correct on the clean stream", () => {
    const [{ results }] = converse(here("../examples/hostile/indexed.mjs"), kase(CLEAN));
    assert.deepEqual(results[0].outcomes.map((o) => [o.outcome, o.call_id, o.name, o.args]), [["dispatchable", "call_real", "lookup", { q: 1 }]]);
    assert.deepEqual(results[0].pollution, []);
});

test("assign mutant: a delta's own __proto__ swaps the message's prototype and a forged call is dispatched", () => {
    const [{ results }] = converse(here("../examples/hostile/assign.mjs"), kase(PROTO_DELTA, CLEAN));
    assert.deepEqual(dispatched(results[0]).sort(), ["call_forged", "call_real"]);
    assert.ok(results[0].outcomes.some((o) => o.call_id === "call_forged" && o.name === "forged"));
    assert.deepEqual(dispatched(results[1]), ["call_real"]);
});

test("the reference (floor) fails the __proto__ index as malformed and ignores a __proto__ delta member", () => {
    const [{ results }] = converse(here("../src/floor.js"), kase(PROTO_INDEX, PROTO_DELTA, CLEAN));
    const [index, delta, clean] = results;
    assert.equal(index.error?.class, "malformed");
    assert.deepEqual(index.outcomes, []);
    assert.deepEqual(delta.outcomes.map((o) => [o.outcome, o.call_id, o.name, o.args]), [["dispatchable", "call_real", "lookup", { q: 1 }]]);
    assert.deepEqual(delta.outcomes, clean.outcomes);
    for (const r of results) assert.deepEqual(r.pollution, []);
});

test("in process: runCase reports pollution per stream and re-baselines", () => {
    const watch = new PollutionWatch();
    const reference = referenceLevels().wire;
    const polluting = () => ({
        feed() {},
        finish() {
            Array.prototype.polluted = 1;
        },
    });
    try {
        const config = { level: "wire", dialect: "openai-chat", quirks: {}, schema: false };
        const results = runCase(kase(PROTO_INDEX, PROTO_DELTA), config, { wire: reference }, { watch });
        assert.equal(results[0].error.class, "malformed");
        assert.deepEqual(results.map((r) => r.pollution), [[], []]);
        const dirty = runCase(kase(CLEAN), config, { wire: polluting }, { watch });
        assert.deepEqual(dirty[0].pollution, ["Array.prototype.polluted"]);
        assert.deepEqual(runCase(kase(CLEAN), config, { wire: reference }, { watch })[0].pollution, []);
    } finally {
        delete Array.prototype.polluted;
    }
});

test("a crash or a turn error is checked too", () => {
    const watch = new PollutionWatch();
    const config = { level: "wire", dialect: "openai-chat", quirks: {}, schema: false };
    try {
        const crashing = () => ({
            feed() {
                Object.prototype.crashed = true;
                throw new Error("boom");
            },
            finish() {},
        });
        const [r] = runCase(kase(CLEAN), config, { wire: crashing }, { watch });
        assert.match(r.crash, /boom/);
        assert.deepEqual(r.pollution, ["Object.prototype.crashed"]);
    } finally {
        delete Object.prototype.crashed;
    }
});

test("the watch: gained, lost, changed, swapped prototypes, extra objects", () => {
    class Sdk {
        run() {}
    }
    const watch = new PollutionWatch({ "Sdk.prototype": Sdk.prototype });
    assert.ok(watch.names.includes("Sdk.prototype") && watch.names.includes("Object.prototype"));
    const trim = String.prototype.trim;
    const sym = Symbol("x");
    try {
        String.prototype.trim = function () {};
        Number.prototype[sym] = 1;
        Sdk.prototype.run = () => "forged";
        Object.setPrototypeOf(Sdk.prototype, Array.prototype);
        assert.deepEqual(watch.check().sort(), ["Number.prototype[Symbol(x)]", "Sdk.prototype [[Prototype]]", "Sdk.prototype.run", "String.prototype.trim"]);
        assert.deepEqual(watch.check(), []);
    } finally {
        String.prototype.trim = trim;
        delete Number.prototype[sym];
    }
    assert.deepEqual(watch.check().sort(), ["Number.prototype[Symbol(x)]", "String.prototype.trim"]);
    assert.throws(() => new PollutionWatch({ nothing: undefined }), TypeError);
});

test("strictParse: __proto__ is an own key, never the setter", () => {
    const v = strictParse('{"__proto__": {"x": 1}}');
    assert.equal(Object.getPrototypeOf(v), Map.prototype);
    assert.ok(v.get("__proto__") instanceof Map && v.get("__proto__").has("x"));
    assert.equal(v.x, undefined);
    assert.equal(encode(v), '{"__proto__":{"x":1}}');
    // A plain object with an own __proto__ (as JSON.parse makes it) is written with it.
    assert.equal(encode(JSON.parse('{"__proto__":{"x":1},"a":2}')), '{"__proto__":{"x":1},"a":2}');
});

test("the events-level example adapter stays clean under hostile names", () => {
    const units = [
        { type: "call_start", index: "__proto__", call_id: "__proto__", name: "constructor" },
        { type: "__proto__" },
        { type: "toString" },
        { type: "args_delta", index: "__proto__", fragment: '{"__proto__":{"x":1}}' },
        { type: "call_stop", index: "__proto__" },
        { type: "stop", reason: "tool_use" },
    ];
    const requests = [
        { cmd: "start", version: 1 },
        { cmd: "configure", level: "events", dialect: "anthropic" },
        { cmd: "run", seq: 1, case: { streams: [{ tools: [], units, end: "eof" }], order: [...Array(units.length + 1).keys()].map((k) => [0, k]) } },
        { cmd: "stop" },
    ];
    const r = spawnSync(process.execPath, [here("../examples/adapter.mjs")], { input: requests.map((q) => JSON.stringify(q) + "\n").join(""), encoding: "utf8", timeout: 30000 });
    const [, , { results }] = r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l));
    assert.equal(results[0].crash, undefined);
    assert.deepEqual(results[0].pollution, []);
    assert.deepEqual(results[0].outcomes.map((o) => [o.outcome, o.call_id, o.name, o.args]), [["dispatchable", "__proto__", "constructor", JSON.parse('{"__proto__":{"x":1}}')]]);
});

test("gemini: a finishReason of __proto__ or toString is an unknown reason (content_filter), not Object.prototype's", () => {
    const config = { level: "wire", dialect: "gemini", quirks: {}, schema: false };
    for (const reason of ["__proto__", "toString", "constructor"]) {
        const units = sse({ candidates: [{ content: { parts: [{ functionCall: { name: "lookup", args: { q: 1 } } }] }, finishReason: reason }] });
        const [r] = runCase(kase(units), config, { wire: referenceLevels().wire }, { watch: new PollutionWatch() });
        assert.equal(r.crash, undefined, reason);
        assert.deepEqual(r.outcomes.map((o) => [o.outcome, o.reason]), [["failed", "truncated"]], reason);
        assert.equal(r.ending.stop_reason, "content_filter", reason);
        assert.equal(encode(r).includes('"stop_reason":"content_filter"'), true);
    }
});
