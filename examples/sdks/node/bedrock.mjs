// toolcert adapter: the AWS SDK for JavaScript v3 Bedrock Runtime client,
// `client.send(new ConverseStreamCommand(...))` and its `stream` of events, fed the harness's
// exact bytes through a custom `requestHandler`.
//
//   toolcert certify --subject 'exec:node examples/sdks/node/bedrock.mjs' --level bytes --dialect bedrock --no-schema
//
// The request handler answers every request with a 200 whose body is the harness's feed (a
// ReadableStream yielding exactly its chunks, one per read; the SDK's event stream marshaller
// iterates it as it is), `content-type: application/vnd.amazon.eventstream`. The SDK's codec
// frames the messages and checks both CRCs; the command's deserializer turns each into an
// event object.
//
// The SDK hands the caller events, not a message: the caller assembles the tool uses, and this
// adapter does it as AWS's documented ConverseStream tool-use example does: one "current" tool
// use, started by `contentBlockStart.start.toolUse`, whose `delta.toolUse.input` strings are
// joined and parsed at the next `contentBlockStop`; text deltas joined into the current text
// block; `messageStop.stopReason` kept; `contentBlockIndex` not consulted (the example does
// not). The joined input is parsed strictly (lib/outcomes.mjs `fromText`); a tool use with no
// input is `{}`; one still open when the stream ends is left out.
//
// Errors: an exception message (ModelStreamErrorException, ThrottlingException, ...), which
// the SDK throws as a service exception, is `upstream`; a framing error of the SDK's codec (a
// checksum or a length) or undecodable JSON is `malformed`; the dropped connection or cancel
// is `incomplete`; anything else `other`. The `documented` caller runs the calls only when
// `stopReason` is `tool_use`, `end_turn` or `stop_sequence`.

import { BedrockRuntimeClient, ConverseStreamCommand } from "@aws-sdk/client-bedrock-runtime";

import { commonClass, packageVersion, serve, uniqueTools } from "./lib/harness.mjs";
import { fromText } from "./lib/outcomes.mjs";

const VERSION = packageVersion("@aws-sdk/client-bedrock-runtime");
const COMPLETE = new Set(["tool_use", "end_turn", "stop_sequence"]);
const CUT = new Set(["max_tokens", "guardrail_intervened", "content_filtered", "model_context_window_exceeded"]);
const bedrockStop = (v) => (COMPLETE.has(v) ? "complete" : CUT.has(v) ? "truncated" : "abandoned");

/** The SDK's HTTP layer, answering from the stream's feed. */
function requestHandler(fetch) {
  return {
    async handle(request, options = {}) {
      const res = await fetch(`http://toolcert.invalid${request.path}`, { signal: options.abortSignal });
      return {
        response: {
          statusCode: 200,
          reason: "OK",
          headers: { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "toolcert" },
          body: res.body,
        },
      };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs: () => ({}),
    destroy() {},
  };
}

serve({
  implementation: {
    name: "@aws-sdk/client-bedrock-runtime ConverseStreamCommand",
    version: VERSION,
    homepage: "https://www.npmjs.com/package/@aws-sdk/client-bedrock-runtime",
    dialects: ["bedrock"],
    policy_doc: "https://docs.aws.amazon.com/bedrock/latest/userguide/tool-use-examples.html",
  },

  begin(ctx) {
    const client = new BedrockRuntimeClient({
      region: "us-east-1",
      credentials: { accessKeyId: "toolcert", secretAccessKey: "toolcert" },
      maxAttempts: 1,
      requestHandler: requestHandler(ctx.fetch),
    });
    const tools = uniqueTools(ctx.tools).map((t) => ({
      toolSpec: { name: t.name, description: `toolcert tool ${t.name}`, inputSchema: { json: t.schema ?? { type: "object" } } },
    }));
    const controller = new AbortController();
    const done = (async () => {
      const response = await client.send(
        new ConverseStreamCommand({
          modelId: "anthropic.claude-sonnet-4-5-20250929-v1:0",
          messages: [{ role: "user", content: [{ text: "toolcert" }] }],
          ...(tools.length ? { toolConfig: { tools } } : {}),
        }),
        { abortSignal: controller.signal },
      );
      // The documentation example's state.
      const content = [];
      let toolUse = {};
      let text = "";
      let stopReason;
      for await (const event of response.stream) {
        if (event.contentBlockStart) {
          const tool = event.contentBlockStart.start?.toolUse;
          if (tool) toolUse = { toolUseId: tool.toolUseId, name: tool.name };
        } else if (event.contentBlockDelta) {
          const delta = event.contentBlockDelta.delta ?? {};
          if (delta.toolUse) toolUse.input = (toolUse.input ?? "") + (delta.toolUse.input ?? "");
          else if (typeof delta.text === "string") {
            text += delta.text;
            ctx.text(delta.text);
          }
        } else if (event.contentBlockStop) {
          if (toolUse.toolUseId !== undefined) {
            content.push({ toolUse });
            toolUse = {};
          } else if (text) {
            content.push({ text });
            text = "";
          }
        } else if (event.messageStop) {
          stopReason = event.messageStop.stopReason;
        }
      }
      return { content, stopReason };
    })();
    const map = ({ content, stopReason }) => {
      const outcomes = [];
      for (const block of content) {
        if (block.toolUse) outcomes.push(fromText(block.toolUse.toolUseId, block.toolUse.name ?? "", block.toolUse.input ?? ""));
      }
      return { outcomes, stop: bedrockStop(stopReason) };
    };
    return { done, map, cancel: () => controller.abort() };
  },

  classify(e) {
    const common = commonClass(e);
    if (common) return common;
    for (let x = e, depth = 0; x && depth < 5; x = x.cause, depth++) {
      // A modeled exception message of the stream (ModelStreamErrorException, ...).
      if (x.$fault !== undefined && /Exception$/.test(x.name ?? "")) return "upstream";
      if (x instanceof SyntaxError) return "malformed";
      if (/checksum|message length|too short|header/i.test(x.message ?? "")) return "malformed";
    }
    return "other";
  },
});
