// toolcert adapter: the openai Node SDK's Responses stream helper,
// `client.responses.stream(...)` and `finalResponse()`, fed the harness's exact bytes through
// an injected `fetch`.
//
//   toolcert certify --subject 'exec:node examples/sdks/node/openai-responses.mjs' --level bytes --dialect openai-responses --no-schema
//
// What the caller gets: `finalResponse()` resolves with a Response whose `output` holds
// `function_call` items, each with `call_id`, `name`, `arguments` (the argument text, a
// string: nothing is parsed for plain function tools) and `status`; it rejects when the
// stream fails. A `function_call` item with status `completed` is judged by a caller that
// parses the text strictly (lib/outcomes.mjs `fromText`); an item the SDK marks
// `in_progress` or `incomplete` is a flag on that call: `failed` (`abandoned`, `truncated`),
// with the text as handed. `response.status` is the stop signal the `documented` caller
// policy checks (README.md): anything but `completed` runs nothing.

// TOOLCERT_NODE_OPENAI names another installed copy of the SDK (package.json keeps
// `openai-6.30.1`, from before `response.incomplete` was handled, beside the newest).
const PACKAGE = process.env.TOOLCERT_NODE_OPENAI || "openai";
const { default: OpenAI } = await import(PACKAGE);

import { commonClass, packageVersion, serve, uniqueTools } from "./lib/harness.mjs";
import { failed, fromText } from "./lib/outcomes.mjs";

const VERSION = packageVersion(PACKAGE);

serve({
  implementation: {
    name: "openai (Node) responses.stream",
    version: VERSION,
    homepage: "https://www.npmjs.com/package/openai",
    dialects: ["openai-responses"],
    policy_doc: "https://platform.openai.com/docs/api-reference/responses/object#responses/object-status",
  },

  begin(ctx) {
    const client = new OpenAI({
      apiKey: "toolcert",
      baseURL: "http://toolcert.invalid/v1",
      fetch: ctx.fetch,
      maxRetries: 0,
    });
    const tools = uniqueTools(ctx.tools).map((t) => ({
      type: "function",
      name: t.name,
      parameters: t.schema ?? { type: "object" },
      strict: false,
    }));
    const stream = client.responses.stream({
      model: "gpt-4.1",
      input: "toolcert",
      ...(tools.length ? { tools } : {}),
    });
    stream.on("response.output_text.delta", (e) => ctx.text(e.delta));
    stream.on("error", () => {});
    const done = stream.finalResponse();
    const map = (response) => {
      const outcomes = [];
      const layout = [];
      for (const item of response.output ?? []) {
        if (item.type === "message") {
          for (const part of item.content ?? []) {
            if (part.type === "output_text") layout.push({ slot: "text", text: part.text ?? "" });
          }
        } else if (item.type === "function_call") {
          layout.push({ slot: "call", call_id: item.call_id });
          const text = item.arguments ?? "";
          if (item.status === "in_progress") outcomes.push(failed("abandoned", item.call_id, item.name, text));
          else if (item.status === "incomplete") outcomes.push(failed("truncated", item.call_id, item.name, text));
          else outcomes.push(fromText(item.call_id, item.name, text));
        }
      }
      const stop = response.status === "completed" ? "complete" : response.status === "incomplete" ? "truncated" : "abandoned";
      return { outcomes, layout, stop };
    };
    return { done, map, cancel: () => stream.abort() };
  },

  classify(e) {
    const common = commonClass(e);
    if (common) return common;
    if (e instanceof OpenAI.APIError && e.status === undefined && !(e instanceof OpenAI.APIConnectionError)) return "upstream";
    return "other";
  },
});
