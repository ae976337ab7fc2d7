// The strict parse and the writer: numbers kept as written, what RFC 8259 refuses refused.
import assert from "node:assert/strict";
import { test } from "node:test";

import { JsonNumber, NotJson, encode, schemaErrors, strictParse } from "../src/index.js";

test("numbers are written back as written", () => {
    for (const text of [
        '{"a":1.0}',
        '{"a":12345678901234567890123}',
        '{"a":0.1000000000000000000001}',
        '{"a":-0}',
        '{"a":1E+2,"b":1e-400}',
        '{"a":9007199254740993}',
        '[1,2.50,"x",null,true,false,{}]',
    ]) {
        assert.equal(encode(strictParse(text)), text);
    }
});

test("what serde_json refuses is refused", () => {
    for (const text of ['{"a": NaN}', '{"a": Infinity}', '{"a": 1e400}', '{"a": "\\ud800"}', '{"a": 1} x', "", "{", '{"a": 01}', "[".repeat(513) + "]".repeat(513)]) {
        assert.throws(() => strictParse(text), NotJson, text);
    }
    assert.ok(strictParse("[".repeat(127) + "]".repeat(127)));
});

test("a number keeps its text beside its double", () => {
    const n = strictParse("12345678901234567890123");
    assert.ok(n instanceof JsonNumber);
    assert.equal(n.text, "12345678901234567890123");
    assert.equal(encode({ big: 12345678901234567890123n, n }), '{"big":12345678901234567890123,"n":12345678901234567890123}');
});

test("objects are maps, so __proto__ is just a key", () => {
    const v = strictParse('{"__proto__": {"x": 1}}');
    assert.ok(v instanceof Map && v.has("__proto__"));
});

test("schema types and bounds", () => {
    const schema = { type: "object", properties: { n: { type: "integer", minimum: 2 } } };
    assert.deepEqual(schemaErrors(schema, strictParse('{"n": 2.0}')), []);
    assert.notDeepEqual(schemaErrors(schema, strictParse('{"n": 1.5}')), []);
});
