// The protocol loop: handshake, configure, seq echo, stamps, skipped and errored replies.
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { test } from "node:test";

import { Skip, TurnError, dispatchable, serve } from "../src/index.js";

/** Dispatches one call whose arguments are everything fed, joined (bytes decoded). */
const echo = (tools) => {
    if (tools[0]?.name === "skip") throw new Skip("no such tool here");
    const parts = [];
    return {
        feed(unit, out) {
            const s = unit instanceof Uint8Array ? Buffer.from(unit).toString("utf8") : unit.type;
            if (s === "boom") throw new TurnError("malformed", "boom");
            if (s === "too_many") throw new TurnError("limit", "past the cap");
            parts.push(s);
        },
        finish(end, out) {
            out.outcome(dispatchable("c", "f", { fed: parts.join(""), end }));
        },
    };
};

async function converse(...requests) {
    return converseWith({}, ...requests);
}

async function converseWith(options, ...requests) {
    const input = new PassThrough();
    const output = new PassThrough();
    let text = "";
    output.on("data", (d) => (text += d));
    const done = serve({ name: "echo", events: echo, bytes: echo, dialects: ["anthropic"], input, output, ...options });
    input.end(requests.map((r) => JSON.stringify(r) + "\n").join(""));
    await done;
    return text.split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

const run = (seq, units, tools = [], end = "eof") => ({
    cmd: "run",
    seq,
    case: { streams: [{ tools, units, end }], order: [...Array(units.length + 1).keys()].map((k) => [0, k]) },
});

test("the handshake declares the levels given", async () => {
    const [start] = await converse({ cmd: "start", version: 1 });
    assert.equal(start.version, 1);
    assert.deepEqual(start.implementation.levels, ["events", "bytes"]);
    assert.deepEqual(start.implementation.capabilities, []);
});

test("caps are declared only when given, and limit is a turn error", async () => {
    const [plain] = await converse({ cmd: "start", version: 1 });
    assert.equal("caps" in plain.implementation, false);
    const caps = { calls: 128, argument_bytes: 16777216, fragments: 65536, depth: 128 };
    const [start, , reply] = await converseWith(
        { caps },
        { cmd: "start", version: 1 },
        { cmd: "configure", level: "events" },
        run(1, [{ type: "too_many" }]),
    );
    assert.deepEqual(start.implementation.caps, caps);
    assert.deepEqual(reply.results[0].error, { class: "limit", detail: "past the cap", units: 1, at_finish: false });
    for (const bad of [{ tools: 1 }, { calls: -1 }, { depth: 1.5 }, { calls: "8" }, [["calls", 1]]]) {
        assert.throws(() => serve({ name: "echo", events: echo, caps: bad, input: new PassThrough() }), TypeError);
    }
});

test("configure refuses an undeclared level or dialect", async () => {
    const replies = await converse(
        { cmd: "configure", level: "wire", dialect: "anthropic" },
        { cmd: "configure", level: "bytes", dialect: "openai-chat" },
        { cmd: "configure", level: "bytes", dialect: "anthropic" },
    );
    assert.deepEqual(replies.map((r) => r.ok), [false, false, true]);
});

test("bytes payloads in text and base64, with stamps", async () => {
    const units = [{ text: "ab" }, { bytes: Buffer.from("é").toString("base64") }];
    const [, reply] = await converse({ cmd: "configure", level: "bytes", dialect: "anthropic" }, run(7, units, [], "cancel"));
    assert.equal(reply.seq, 7);
    const [o] = reply.results[0].outcomes;
    assert.deepEqual(o.args, { fed: "abé", end: "cancel" });
    assert.deepEqual([o.units, o.at_finish], [2, true]);
    // The adapter's own time for the run, for `toolcert bench`.
    assert.ok(Number.isInteger(reply.elapsed_ns) && reply.elapsed_ns > 0);
});

test("a turn error ends the stream with its stamp", async () => {
    const [, reply] = await converse({ cmd: "configure", level: "events" }, run(1, [{ type: "ping" }, { type: "boom" }]));
    assert.deepEqual(reply.results[0].error, { class: "malformed", detail: "boom", units: 2, at_finish: false });
    assert.deepEqual(reply.results[0].outcomes, []);
});

test("skipped and errored replies", async () => {
    const replies = await converse(
        { cmd: "configure", level: "events" },
        run(2, [], [{ name: "skip" }]),
        { cmd: "run", seq: 3, case: {} },
    );
    assert.deepEqual(replies[1], { seq: 2, skipped: true, reason: "no such tool here" });
    assert.equal(replies[2].seq, 3);
    assert.equal(replies[2].errored, true);
});
