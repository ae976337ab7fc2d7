// The README's twenty-line adapter is examples/adapter.mjs (which node/ci.sh certifies).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const read = (p) => readFileSync(new URL(p, import.meta.url), "utf8");

test("the README adapter is the example", () => {
    const shown = read("../README.md").match(/## An adapter in twenty lines[\s\S]*?```js\n([\s\S]*?)```/)[1];
    const example = read("../examples/adapter.mjs").split("\n").slice(1).join("\n"); // without the comment line
    assert.equal(shown, example);
});
