// toolcert adapter: the openai Node SDK's Chat Completions stream helper,
// `client.chat.completions.stream(...)` and `finalChatCompletion()`, fed the harness's exact
// bytes through an injected `fetch`.
//
//   toolcert certify --subject 'exec:node examples/sdks/node/openai-chat.mjs' --level bytes --dialect openai-chat --no-schema
//
// What the caller gets: `finalChatCompletion()` resolves with a ChatCompletion whose
// `choices[0].message.tool_calls[i].function.arguments` is the argument text as a string
// (the SDK parses nothing unless a tool is `strict` or a zod tool: these are plain function
// tools); it rejects when the stream fails. Each call is judged by a caller that parses the
// text strictly (lib/outcomes.mjs `fromText`). `finish_reason` is the stop signal the
// `documented` caller policy checks (README.md); `as-handed-over` dispatches the calls either way.

// TOOLCERT_NODE_OPENAI names another installed copy of the SDK (package.json keeps
// `openai-6.30.1`, from before `response.incomplete` was handled, beside the newest).
const PACKAGE = process.env.TOOLCERT_NODE_OPENAI || "openai";
const { default: OpenAI } = await import(PACKAGE);

import { QUIRKS, chatStop, commonClass, packageVersion, serve, uniqueTools } from "./lib/harness.mjs";
import { fromText } from "./lib/outcomes.mjs";

const VERSION = packageVersion(PACKAGE);

serve({
  implementation: {
    name: "openai (Node) chat.completions.stream",
    version: VERSION,
    homepage: "https://www.npmjs.com/package/openai",
    dialects: ["openai-chat"],
    quirks: QUIRKS,
    policy_doc: "https://platform.openai.com/docs/api-reference/chat/object#chat/object-choices",
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
      function: { name: t.name, parameters: t.schema ?? { type: "object" } },
    }));
    const stream = client.chat.completions.stream({
      model: "gpt-4o",
      messages: [{ role: "user", content: "toolcert" }],
      ...(tools.length ? { tools } : {}),
    });
    stream.on("content", (delta) => ctx.text(delta));
    const done = stream.finalChatCompletion();
    const map = (completion) => {
      const message = completion.choices[0]?.message;
      const outcomes = (message?.tool_calls ?? []).map((tc) =>
        fromText(tc.id, tc.function?.name ?? "", tc.function?.arguments ?? ""),
      );
      return { outcomes, stop: chatStop(completion.choices[0]?.finish_reason) };
    };
    // Keep the helper's own 'error' event from becoming an unhandled rejection.
    stream.on("error", () => {});
    return { done, map, cancel: () => stream.abort() };
  },

  classify(e) {
    const common = commonClass(e);
    if (common) return common;
    const kind = e?.constructor?.name;
    if (kind === "LengthFinishReasonError" || kind === "ContentFilterFinishReasonError") return "truncated";
    // An error the provider sent in the stream (`data: {"error": ...}`): no HTTP status.
    if (e instanceof OpenAI.APIError && e.status === undefined && !(e instanceof OpenAI.APIConnectionError)) return "upstream";
    return "other";
  },
});
