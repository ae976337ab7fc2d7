#!/usr/bin/env python3
"""toolcert adapter for pydantic-ai (`pydantic-ai-slim`): its streamed-parts manager, the
layer every pydantic-ai model streams through, in three dialects.

What it drives, per stream: `Model.request_stream(...)` of `OpenAIChatModel` (openai-chat),
`OpenAIResponsesModel` (openai-responses) or `AnthropicModel` (anthropic), on a provider whose
async client's HTTP transport is an `httpx2.MockTransport` answering with the stream's exact
chunks; it iterates the stream's events (collecting text deltas as a UI would show them), then
reads `StreamedResponse.get()`, the `ModelResponse` the parts manager assembled. This is what
`Agent.run_stream` and `Agent.iter` hand their tool-running step.

What it reports: each `ToolCallPart` of the response's `parts`, in order. pydantic-ai keeps a
call's arguments as the text the model streamed (`ToolCallPart.args`, a `str`, or a `dict`
when a provider hands an object), so the adapter parses a string as a careful caller would,
strictly (RFC 8259): one JSON object is `dispatchable`, anything else `failed(unparseable)`
with the string as `raw`. Text = the `TextPart`s joined. The stop signal for the documented
policy is `ModelResponse.finish_reason`, pydantic-ai's normalised finish reason (`stop` and
`tool_call` complete, `length` and `content_filter` cut, `error` or missing: unfinished;
https://ai.pydantic.dev/api/messages/#pydantic_ai.messages.ModelResponse.finish_reason). An
exception from pydantic-ai or the provider SDK under it is a turn error: `upstream` for
`ModelHTTPError` / the provider's status errors, `incomplete` when the body ended early,
`malformed` for undecodable data, `other` otherwise.

    toolcert certify --subject 'exec:examples/sdks/python/.venv/bin/python examples/sdks/python/pydantic_ai_sdk.py --dialect openai-chat' \
        --level bytes --dialect openai-chat --no-schema

(`--dialect D` serves one dialect and imports only its provider SDK; without it the adapter
serves all three.)
"""

from __future__ import annotations

import asyncio
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the adapters
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sdk_harness import (  # noqa: E402
    QUIRKS,
    SdkCall,
    main,
    Outcome,
    SdkAdapter,
    classify_common,
    exception_chain,
    ended_early,
    from_argument_text,
    dispatch,
    httpx2_async_client,
    stop_signal,
)

# pydantic-ai's normalised finish reasons (`pydantic_ai.messages.FinishReason`).
FINISH_COMPLETE = {"stop", "tool_call"}
FINISH_CUT = {"length", "content_filter"}

# The pydantic-ai model module of each dialect.
MODULES = {
    "openai-chat": "pydantic_ai.models.openai",
    "openai-responses": "pydantic_ai.models.openai",
    "anthropic": "pydantic_ai.models.anthropic",
}


class PydanticAIAdapter(SdkAdapter):
    name = "pydantic-ai"
    dialects = ("openai-chat", "openai-responses", "anthropic")
    sdk_package = "pydantic-ai-slim openai anthropic"
    homepage = "https://pypi.org/project/pydantic-ai-slim/"
    preload_modules = ("pydantic_ai", "pydantic_ai.models.openai", "pydantic_ai.models.anthropic")
    quirks = QUIRKS  # an SDK reads whatever bytes come: every server profile
    policy_doc = "https://ai.pydantic.dev/api/messages/#pydantic_ai.messages.ModelResponse.finish_reason"

    def __init__(self, argv: list[str]):
        # `--dialect D` serves that dialect alone, importing only its provider SDK: the three
        # together take seconds to import on a loaded machine, against the first request's
        # timeout.
        if "--dialect" in argv:
            i = argv.index("--dialect")
            wanted = argv[i + 1] if i + 1 < len(argv) else ""
            if wanted not in self.dialects:
                print(f"unknown dialect {wanted!r} (one of {', '.join(self.dialects)})", file=sys.stderr)
                sys.exit(2)
            self.dialects = (wanted,)
            self.preload_modules = ("pydantic_ai", MODULES[wanted])

    def setup(self, slot) -> None:
        import importlib

        from pydantic_ai import exceptions

        self.exceptions = exceptions
        self.loop = asyncio.new_event_loop()
        self.models = {}
        self.status_errors: tuple = (exceptions.ModelHTTPError,)
        if "anthropic" in self.dialects:
            import anthropic
            from pydantic_ai.providers.anthropic import AnthropicProvider

            an = anthropic.AsyncAnthropic(api_key="toolcert-dummy", max_retries=0,
                                          http_client=httpx2_async_client(slot))
            model = importlib.import_module(MODULES["anthropic"]).AnthropicModel
            self.models["anthropic"] = model("claude-sonnet-4-5", provider=AnthropicProvider(anthropic_client=an))
            self.status_errors += (anthropic.APIStatusError,)
        if {"openai-chat", "openai-responses"} & set(self.dialects):
            import openai
            from pydantic_ai.providers.openai import OpenAIProvider

            oa = openai.AsyncOpenAI(api_key="toolcert-dummy", base_url="http://toolcert.invalid/v1",
                                    max_retries=0, http_client=httpx2_async_client(slot))
            models = importlib.import_module(MODULES["openai-chat"])
            self.models["openai-chat"] = models.OpenAIChatModel("gpt-4.1", provider=OpenAIProvider(openai_client=oa))
            self.models["openai-responses"] = models.OpenAIResponsesModel(
                "gpt-4.1", provider=OpenAIProvider(openai_client=oa))
            self.status_errors += (openai.APIError,)

    def warm_up(self, slot) -> None:
        # One small complete stream per model: each has its own first-call costs.
        for dialect in self.dialects:
            super().warm_up(slot, dialect)

    def classify(self, e: BaseException) -> str:
        chain = list(exception_chain(e))
        if ended_early(chain):
            return "incomplete"
        for x in chain:
            if isinstance(x, self.status_errors):
                return "upstream"
        return classify_common(e)

    async def _stream(self, dialect: str, tools: list[dict], shown: list[str]):
        from pydantic_ai.messages import ModelRequest, PartDeltaEvent, PartStartEvent, TextPart, \
            TextPartDelta, UserPromptPart
        from pydantic_ai.models import ModelRequestParameters
        from pydantic_ai.tools import ToolDefinition

        defs = [
            ToolDefinition(
                name=t["name"],
                description=f"toolcert tool {t['name']}",
                parameters_json_schema=t["schema"] if isinstance(t.get("schema"), dict) else {"type": "object"},
            )
            for t in tools
        ]
        params = ModelRequestParameters(function_tools=defs, allow_text_output=True)
        messages = [ModelRequest(parts=[UserPromptPart("toolcert")])]
        async with self.models[dialect].request_stream(messages, None, params) as stream:
            async for event in stream:
                if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                    shown.append(event.part.content)
                elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                    shown.append(event.delta.content_delta)
            return stream.get()

    def run(self, slot, feed, tools, dialect) -> Outcome:
        from pydantic_ai.messages import TextPart, ToolCallPart

        out = Outcome()
        shown: list[str] = []
        response = None
        with SdkCall(self, out, shown):
            response = self.loop.run_until_complete(self._stream(dialect, tools, shown))
        if out.error is not None:
            return out
        out.stop = stop_signal(response.finish_reason, FINISH_COMPLETE, FINISH_CUT)
        out.stop_detail = response.finish_reason
        text: list[str] = []
        layout: list[dict] = []
        for part in response.parts:
            if isinstance(part, TextPart):
                text.append(part.content)
                layout.append({"slot": "text", "text": part.content})
            elif isinstance(part, ToolCallPart):
                if isinstance(part.args, dict):
                    out.calls.append(dispatch(part.tool_call_id, part.tool_name, part.args))
                else:
                    out.calls.append(from_argument_text(part.tool_call_id, part.tool_name, part.args))
                layout.append({"slot": "call", "call_id": part.tool_call_id})
        out.text = "".join(text)
        # Only Anthropic's content is one ordered list of blocks; Chat and Responses keep
        # text and calls apart, so no layout is claimed there.
        if dialect == "anthropic":
            out.layout = layout
        return out


if __name__ == "__main__":
    sys.exit(main(PydanticAIAdapter(sys.argv[1:])))
