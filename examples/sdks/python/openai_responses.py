#!/usr/bin/env python3
"""toolcert adapter for the OpenAI Python SDK (`openai`), Responses streaming helper.

What it drives, per stream: `client.responses.stream(...)` on a client whose HTTP transport
is an `httpx2.MockTransport` answering with the stream's exact chunks; it iterates the
helper's events (collecting `response.output_text.delta` as a UI would show it), then calls
`get_final_response()`.

What it reports: each `function_call` item of the final response's `output`. The SDK hands
the arguments over as a string (`arguments`; `parsed_arguments` is only filled for `strict`
tools, which these are not), so the adapter parses it as a careful caller would, strictly
(RFC 8259): one JSON object is `dispatchable`, anything else `failed(unparseable)` with the
string as `raw`. Text = the `output_text` parts of the output's message items; layout = the
order of message and function_call items. The response's `status` is not a per-call flag and
is not consulted. An exception from the SDK is a turn error (`upstream` for an `APIError`,
`malformed` for undecodable event data, `other` otherwise, including the helper's
`RuntimeError("Didn't receive a response.completed event.")`).

    toolcert certify --subject 'exec:examples/sdks/python/.venv/bin/python examples/sdks/python/openai_responses.py' \
        --level bytes --dialect openai-responses --no-schema
"""

from __future__ import annotations

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the adapters
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from openai_chat import BASE_URL, classify_openai  # noqa: E402
from sdk_harness import (  # noqa: E402
    SdkCall,
    main,
    Outcome,
    SdkAdapter,
    from_argument_text,
    httpx2_client,
    stop_signal,
)


def response_tools(tools: list[dict]) -> list[dict]:
    out = []
    for t in tools:
        schema = t.get("schema")
        out.append({
            "type": "function",
            "name": t["name"],
            "description": f"toolcert tool {t['name']}",
            "parameters": schema if isinstance(schema, dict) else {"type": "object"},
            "strict": False,
        })
    return out


class OpenAIResponsesAdapter(SdkAdapter):
    name = "openai-python-responses"
    dialects = ("openai-responses",)
    sdk_package = "openai"
    homepage = "https://pypi.org/project/openai/"
    preload_modules = ("openai",)
    policy_doc = "https://platform.openai.com/docs/api-reference/responses/object#responses/object-status"

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
            params["tools"] = response_tools(tools)
        with SdkCall(self, out, shown):
            with self.client.responses.stream(model="gpt-4.1", input="toolcert", **params) as stream:
                for event in stream:
                    if event.type == "response.output_text.delta":
                        shown.append(event.delta)
                response = stream.get_final_response()
        if out.error is not None:
            return out
        out.stop = stop_signal(getattr(response, "status", None), {"completed"}, {"incomplete"})

        text: list[str] = []
        layout: list[dict] = []
        for item in response.output or []:
            kind = getattr(item, "type", None)
            if kind == "message":
                for part in getattr(item, "content", None) or []:
                    if getattr(part, "type", None) == "output_text":
                        text.append(part.text or "")
                        layout.append({"slot": "text", "text": part.text or ""})
            elif kind == "function_call":
                out.calls.append(from_argument_text(item.call_id, item.name, item.arguments))
                layout.append({"slot": "call", "call_id": item.call_id})
        out.text = "".join(text)
        out.layout = layout
        return out


if __name__ == "__main__":
    sys.exit(main(OpenAIResponsesAdapter()))
