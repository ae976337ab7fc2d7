// toolcert adapter: the Vercel AI SDK (`ai`) `streamText` with tools, over its OpenAI provider
// (`@ai-sdk/openai`: `openai.chat(...)` for Chat Completions, `openai.responses(...)` for
// Responses) and its Anthropic provider (`@ai-sdk/anthropic`), fed the harness's exact bytes
// through the provider's injected `fetch`. The configured dialect picks the provider.
//
//   toolcert certify --subject 'exec:node examples/sdks/node/vercel-ai.mjs' --level bytes --dialect openai-chat --no-schema
//
// `streamText` is an agent layer: it runs the tools itself. Every tool of the stream is
// registered as a recording tool (its `execute` records the input it was called with, and
// when, and returns "ok"); one step only (`stopWhen: stepCountIs(1)`), so nothing is sent
// back to the model. What the caller gets, mapped onto outcomes:
//   - a call whose `execute` ran is `dispatchable`, with the input `execute` received;
//   - a `tool-call` part the SDK marks `invalid` (its input did not parse, or named no tool)
//     and so never runs is `failed` (`unparseable`), with the SDK's raw input text;
//   - a valid `tool-call` part the SDK did not run is `failed` with the step's finish reason
//     as the reason (`length` and `content-filter` are `truncated`, anything else
//     `abandoned`): the SDK runs tools only after a `stop` or `tool-calls` finish;
//   - an `error` part (the provider's error event, a failed stream) is the turn error; an
//     exception out of `fullStream` is too.
// The provider's own argument text for each call is read from its `tool-call` stream part
// (a pass-through language-model middleware), for `raw` and to write numbers as the model
// wrote them (lib/json.mjs `present`).

import { streamText, tool, jsonSchema, stepCountIs, wrapLanguageModel } from "ai";
import { createAnthropic } from "@ai-sdk/anthropic";

import { QUIRKS, commonClass, packageVersion, serve, summary, uniqueTools } from "./lib/harness.mjs";
import { failed, fromValue } from "./lib/outcomes.mjs";

// TOOLCERT_NODE_AI_OPENAI names another installed copy of the OpenAI provider (package.json
// keeps @ai-sdk/openai 3.0.81, from before its fix for finalising tool calls on parsable
// partial JSON, as `ai-sdk-openai-3.0.81`), so the matrix shows the fix.
const OPENAI_PACKAGE = process.env.TOOLCERT_NODE_AI_OPENAI || "@ai-sdk/openai";
const { createOpenAI } = await import(OPENAI_PACKAGE);

const VERSIONS = {
  ai: packageVersion("ai"),
  openai: packageVersion(OPENAI_PACKAGE),
  anthropic: packageVersion("@ai-sdk/anthropic"),
};

function model(dialect, fetch) {
  switch (dialect) {
    case "openai-chat":
      return createOpenAI({ apiKey: "toolcert", baseURL: "http://toolcert.invalid/v1", fetch }).chat("gpt-4o");
    case "openai-responses":
      return createOpenAI({ apiKey: "toolcert", baseURL: "http://toolcert.invalid/v1", fetch }).responses("gpt-4.1");
    case "anthropic":
      return createAnthropic({ apiKey: "toolcert", baseURL: "http://toolcert.invalid/v1", fetch })("claude-sonnet-4-5");
    default:
      throw new Error(`no provider for ${dialect}`);
  }
}

/** Truncating finish reasons of the AI SDK's unified set. */
const TRUNCATING = new Set(["length", "content-filter"]);

function classify(e) {
  const common = commonClass(e);
  if (common) return common;
  const name = e?.constructor?.name ?? e?.name;
  // The provider's error event reaches the caller as a plain error object (not an Error) in
  // an `error` part.
  if (!(e instanceof Error)) return "upstream";
  if (name === "APICallError" && e.statusCode === undefined) return "upstream";
  return "other";
}

serve({
  implementation: {
    name: "ai (Vercel AI SDK) streamText",
    version: `${VERSIONS.ai} (@ai-sdk/openai ${VERSIONS.openai}, @ai-sdk/anthropic ${VERSIONS.anthropic})`,
    homepage: "https://www.npmjs.com/package/ai",
    dialects: ["openai-chat", "openai-responses", "anthropic"],
    quirks: QUIRKS,
    // streamText runs the tools itself, as each tool-call part arrives: no check a caller
    // makes afterwards can keep a call from running, so both caller policies give the same
    // outcomes (the SDK's documentation: tools run when the model calls them).
    policy_doc: "https://ai-sdk.dev/docs/ai-sdk-core/tools-and-tool-calling",
  },

  begin(ctx) {
    const executed = new Map(); // toolCallId -> {input, stamp}
    const rawText = new Map(); // toolCallId -> the provider's argument text
    const recording = (name, schema) =>
      tool({
        description: name,
        inputSchema: jsonSchema(schema ?? { type: "object" }),
        execute: async (input, { toolCallId }) => {
          if (!executed.has(toolCallId)) executed.set(toolCallId, { input, stamp: ctx.stamp() });
          return "ok";
        },
      });
    const listed = uniqueTools(ctx.tools);
    let tools = {};
    for (const t of listed) tools[t.name] = recording(t.name, t.schema);
    if (listed.length === 0) {
      // The case lists no tools (the named cases leave them out): register a recording tool
      // under whatever name the SDK looks up, as an app that offered the model that tool.
      tools = new Proxy(
        {},
        {
          get(target, name) {
            if (typeof name !== "string" || name === "then") return undefined;
            if (!(name in target)) target[name] = recording(name, null);
            return target[name];
          },
        },
      );
    }
    const tap = {
      specificationVersion: "v3",
      wrapStream: async ({ doStream }) => {
        const r = await doStream();
        const stream = r.stream.pipeThrough(
          new TransformStream({
            transform(part, controller) {
              if (part?.type === "tool-call" && typeof part.input === "string") rawText.set(part.toolCallId, part.input);
              controller.enqueue(part);
            },
          }),
        );
        return { ...r, stream };
      },
    };
    const abort = new AbortController();
    const result = streamText({
      model: wrapLanguageModel({ model: model(ctx.dialect, ctx.fetch), middleware: tap }),
      prompt: "toolcert",
      tools,
      maxRetries: 0,
      stopWhen: stepCountIs(1),
      abortSignal: abort.signal,
      onError: () => {},
    });

    const done = (async () => {
      const calls = []; // tool-call parts in order
      const layout = [];
      let finishReason;
      let error;
      try {
        for await (const part of result.fullStream) {
          switch (part.type) {
            case "text-delta":
              ctx.text(part.text);
              if (layout.length && layout[layout.length - 1].slot === "text") layout[layout.length - 1].text += part.text;
              else layout.push({ slot: "text", text: part.text });
              break;
            case "tool-call":
              calls.push(part);
              layout.push({ slot: "call", call_id: part.toolCallId });
              break;
            case "finish-step":
            case "finish":
              finishReason = part.finishReason;
              break;
            case "error":
              if (error === undefined) error = { class: classify(part.error), detail: summary(part.error), at: ctx.stamp() };
              break;
            case "abort":
              if (error === undefined) error = { class: "incomplete", detail: "the stream was aborted", at: ctx.stamp() };
              break;
            default:
              break;
          }
        }
      } catch (e) {
        if (error === undefined) error = { class: classify(e), detail: summary(e), at: ctx.stamp() };
      }
      return { calls, layout, finishReason, error };
    })();
    // The adapter's own mapping, apart from the SDK's iteration: an exception here is the
    // adapter's (a crash), not a turn error.
    const map = ({ calls, layout, finishReason, error }) => {
      const outcomes = [];
      for (const call of calls) {
        const id = call.toolCallId;
        const raw = rawText.get(id) ?? (typeof call.input === "string" ? call.input : JSON.stringify(call.input ?? null));
        const ran = executed.get(id);
        if (ran !== undefined) {
          outcomes.push({ ...fromValue(id, call.toolName, ran.input, raw), units: ran.stamp.units, at_finish: ran.stamp.at_finish });
        } else if (call.invalid) {
          outcomes.push(failed("unparseable", id, call.toolName, raw));
        } else {
          outcomes.push(failed(TRUNCATING.has(finishReason) ? "truncated" : "abandoned", id, call.toolName, raw));
        }
      }
      // Tools that ran without a tool-call part reaching the caller (none expected).
      for (const [id, ran] of executed) {
        if (!calls.some((c) => c.toolCallId === id)) {
          outcomes.push({ ...fromValue(id, "", ran.input, rawText.get(id)), units: ran.stamp.units, at_finish: ran.stamp.at_finish });
        }
      }
      return error === undefined ? { outcomes, layout } : { outcomes, error };
    };
    return { done, map, cancel: () => abort.abort() };
  },

  classify,
});
