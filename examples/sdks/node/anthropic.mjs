// toolcert adapter: the Anthropic TypeScript SDK's stream helper, `client.messages.stream(...)`
// and `finalMessage()`, fed the harness's exact bytes through an injected `fetch`.
//
//   toolcert certify --subject 'exec:node examples/sdks/node/anthropic.mjs' --level bytes --dialect anthropic --no-schema
//
// What the caller gets: `finalMessage()` resolves with a Message whose `content` holds
// `tool_use` blocks, each with `id`, `name` and `input`, an object the SDK parsed itself
// (its vendored partial-JSON parser over the `input_json_delta` fragments, then JSON.parse);
// it rejects when the stream fails. Every `tool_use` block of the final message is offered
// for dispatch with its `input` exactly as the SDK built it. `stop_reason` is passed to the
// caller as it came and is not taken as a flag on the blocks (see README.md). The SDK keeps
// the fragments joined in a non-enumerable `__json_buf` property: the adapter reads it only
// to write numbers as the model wrote them (lib/json.mjs `present`).

import Anthropic from "@anthropic-ai/sdk";

import { anthropicStop, commonClass, packageVersion, sdkGet, serve, uniqueTools } from "./lib/harness.mjs";
import { fromValue } from "./lib/outcomes.mjs";

const VERSION = packageVersion("@anthropic-ai/sdk");

serve({
  implementation: {
    name: "@anthropic-ai/sdk messages.stream",
    version: VERSION,
    homepage: "https://www.npmjs.com/package/@anthropic-ai/sdk",
    dialects: ["anthropic"],
    policy_doc: "https://docs.anthropic.com/en/api/handling-stop-reasons",
  },

  begin(ctx) {
    const client = new Anthropic({
      apiKey: "toolcert",
      baseURL: "http://toolcert.invalid",
      fetch: ctx.fetch,
      maxRetries: 0,
    });
    const tools = uniqueTools(ctx.tools).map((t) => ({
      name: t.name,
      input_schema: t.schema ?? { type: "object" },
    }));
    const stream = client.messages.stream({
      model: "claude-sonnet-4-5",
      max_tokens: 4096,
      messages: [{ role: "user", content: "toolcert" }],
      ...(tools.length ? { tools } : {}),
    });
    stream.on("text", (delta) => ctx.text(delta));
    stream.on("error", () => {});
    const done = stream.finalMessage();
    const map = (message) => {
      const outcomes = [];
      const layout = [];
      for (const block of message.content ?? []) {
        if (block.type === "text") layout.push({ slot: "text", text: block.text ?? "" });
        else if (block.type === "tool_use") {
          layout.push({ slot: "call", call_id: block.id });
          // `input` is a getter that parses the buffer: when it throws, the SDK failed the turn.
          const input = sdkGet(() => block.input);
          outcomes.push(fromValue(block.id, block.name, input, block.__json_buf));
        }
      }
      return { outcomes, layout, stop: anthropicStop(message.stop_reason) };
    };
    return { done, map, cancel: () => stream.abort() };
  },

  classify(e) {
    const common = commonClass(e);
    if (common) return common;
    // An `event: error` in the stream: an APIError without an HTTP status.
    if (e instanceof Anthropic.APIError && e.status === undefined && !(e instanceof Anthropic.APIConnectionError)) return "upstream";
    return "other";
  },
});
