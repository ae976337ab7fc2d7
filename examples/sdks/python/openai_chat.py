#!/usr/bin/env python3
"""toolcert adapter for the OpenAI Python SDK (`openai`), Chat Completions streaming helper.

What it drives, per stream: `client.chat.completions.stream(...)` on a client whose HTTP
transport is an `httpx2.MockTransport` answering with the stream's exact chunks; it iterates
the helper's events (collecting `content.delta` as a UI would show it), then calls
`get_final_completion()`.

What it reports: each entry of `choices[0].message.tool_calls` that has a `function` (the
helper keeps entries of a missing or unknown `type` as they came; only `custom` tool calls
are dropped, by the SDK, with a warning). The SDK hands the arguments over as a string
(`function.arguments`; `parsed_arguments` is only filled for `strict` tools, which these are
not), so the adapter parses it as a careful caller would, strictly (RFC 8259): one JSON
object is `dispatchable`, anything else `failed(unparseable)` with the string as `raw`. Text = `message.content`. No layout (the message keeps content and
tool calls apart). The choice's `finish_reason` is not a per-call flag and is not consulted
(the helper itself raises on `length` and `content_filter`, see below). An exception from the
SDK is a turn error: `upstream` for the `APIError` a chunk with an `error` object raises,
`truncated` for `LengthFinishReasonError` / `ContentFilterFinishReasonError`, `malformed`
for undecodable event data, `other` otherwise.

    toolcert certify --subject 'exec:examples/sdks/python/.venv/bin/python examples/sdks/python/openai_chat.py' \
        --level bytes --dialect openai-chat --no-schema
"""

from __future__ import annotations

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
    httpx2_client,
    CHAT_COMPLETE,
    CHAT_CUT,
    stop_signal,
)

BASE_URL = "http://toolcert.invalid/v1"


def chat_tools(tools: list[dict]) -> list[dict]:
    out = []
    for t in tools:
        schema = t.get("schema")
        out.append({
            "type": "function",
            "function": {
                "name": t["name"],
                "description": f"toolcert tool {t['name']}",
                "parameters": schema if isinstance(schema, dict) else {"type": "object"},
            },
        })
    return out


def classify_openai(openai, e: BaseException) -> str:
    """`truncated` for the helper's finish-reason errors; `upstream` when the chain holds the
    plain `openai.APIError` the SDK's Stream raises for a chunk carrying an `error` object
    (wrappers such as LangChain's or LiteLLM's keep it as a cause); the common mapping
    otherwise."""
    chain = list(exception_chain(e))
    if ended_early(chain):
        return "incomplete"
    for x in chain:
        if isinstance(x, (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError)):
            return "truncated"
    for x in chain:
        if type(x) is openai.APIError:
            return "upstream"
    return classify_common(e)


class OpenAIChatAdapter(SdkAdapter):
    name = "openai-python-chat"
    dialects = ("openai-chat",)
    sdk_package = "openai"
    homepage = "https://pypi.org/project/openai/"
    preload_modules = ("openai",)
    quirks = QUIRKS  # an SDK reads whatever bytes come: every server profile
    policy_doc = "https://platform.openai.com/docs/api-reference/chat/object#chat/object-choices"

    def setup(self, slot) -> None:
        import openai

        self.openai = openai
        self.client = openai.OpenAI(api_key="toolcert-dummy", base_url=BASE_URL, max_retries=0,
                                    http_client=httpx2_client(slot))

    def classify(self, e: BaseException) -> str:
        return classify_openai(self.openai, e)

    def run(self, slot, feed, tools, dialect) -> Outcome:
        out = Outcome()
        shown: list[str] = []
        params = {}
        if tools:
            params["tools"] = chat_tools(tools)
        with SdkCall(self, out, shown):
            with self.client.chat.completions.stream(
                model="gpt-4.1",
                messages=[{"role": "user", "content": "toolcert"}],
                **params,
            ) as stream:
                for event in stream:
                    if event.type == "content.delta":
                        shown.append(event.delta)
                completion = stream.get_final_completion()
        if out.error is not None:
            return out

        if not completion.choices:
            return out
        message = completion.choices[0].message
        out.stop = stop_signal(completion.choices[0].finish_reason, CHAT_COMPLETE, CHAT_CUT)
        out.text = message.content or ""
        # Every entry the message hands over with a `function`, whatever its `type` says: the
        # helper keeps entries of an unknown or missing type in `tool_calls` as they came.
        for tc in message.tool_calls or []:
            function = getattr(tc, "function", None)
            if function is not None:
                out.calls.append(from_argument_text(tc.id, function.name, function.arguments))
        return out


if __name__ == "__main__":
    sys.exit(main(OpenAIChatAdapter()))
