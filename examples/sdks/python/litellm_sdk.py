#!/usr/bin/env python3
"""toolcert adapter for LiteLLM (`litellm`), streaming completion over the OpenAI Chat
Completions provider.

What it drives, per stream: `litellm.completion(model="openai/gpt-4.1", stream=True,
client=openai.OpenAI(http_client=httpx2.Client(transport=MockTransport)))`: LiteLLM's OpenAI
provider makes the request with the client it is given, so the body is the stream's exact
chunks. The chunks LiteLLM yields are collected and rebuilt with
`litellm.stream_chunk_builder(chunks, messages=...)`, as LiteLLM's docs show.

What it reports: each tool call of the rebuilt `choices[0].message.tool_calls`. LiteLLM hands
the arguments over as a string (`function.arguments`), so the adapter parses it as a careful
caller would, strictly (RFC 8259): one JSON object is `dispatchable`, anything else
`failed(unparseable)` with the string as `raw`. Text = the rebuilt `message.content`. No
layout. `finish_reason` is not a per-call flag and is not consulted. An exception is a turn
error (`upstream` for an API error from an error chunk, `malformed` for undecodable event
data, `other` otherwise). `LITELLM_LOCAL_MODEL_COST_MAP=True` is set before the import, so
nothing leaves the machine.

    toolcert certify --subject 'exec:examples/sdks/python/.venv/bin/python examples/sdks/python/litellm_sdk.py' \
        --level bytes --dialect openai-chat --no-schema
"""

from __future__ import annotations

import os
import sys

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ.setdefault("LITELLM_LOG", "ERROR")

sys.dont_write_bytecode = True  # no __pycache__ beside the adapters
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from openai_chat import BASE_URL, chat_tools, classify_openai  # noqa: E402
from sdk_harness import (  # noqa: E402
    QUIRKS,
    SdkCall,
    main,
    Outcome,
    SdkAdapter,
    from_argument_text,
    httpx2_client,
    CHAT_COMPLETE,
    CHAT_CUT,
    stop_signal,
)

MESSAGES = [{"role": "user", "content": "toolcert"}]


class LiteLLMAdapter(SdkAdapter):
    name = "litellm-python"
    dialects = ("openai-chat",)
    sdk_package = "litellm openai"
    homepage = "https://pypi.org/project/litellm/"
    preload_modules = ("litellm",)
    quirks = QUIRKS  # an SDK reads whatever bytes come: every server profile
    policy_doc = "https://docs.litellm.ai/docs/completion/output"

    def setup(self, slot) -> None:
        import litellm
        import openai

        litellm.telemetry = False
        litellm.suppress_debug_info = True
        self.litellm = litellm
        self.openai = openai
        self.client = openai.OpenAI(api_key="toolcert-dummy", base_url=BASE_URL, max_retries=0,
                                    http_client=httpx2_client(slot))

    def classify(self, e: BaseException) -> str:
        return classify_openai(self.openai, e)

    def run(self, slot, feed, tools, dialect) -> Outcome:
        out = Outcome()
        params = {}
        if tools:
            params["tools"] = chat_tools(tools)
        chunks = []
        shown: list[str] = []
        with SdkCall(self, out, shown):
            response = self.litellm.completion(
                model="openai/gpt-4.1",
                messages=MESSAGES,
                stream=True,
                client=self.client,
                api_key="toolcert-dummy",
                api_base=BASE_URL,
                max_retries=0,
                **params,
            )
            for chunk in response:
                chunks.append(chunk)
                for choice in getattr(chunk, "choices", None) or []:
                    if getattr(choice, "index", 0) == 0 and getattr(choice.delta, "content", None):
                        shown.append(choice.delta.content)
            final = self.litellm.stream_chunk_builder(chunks, messages=MESSAGES)
        if out.error is not None:
            return out

        if final is None or not final.choices:
            return out
        message = final.choices[0].message
        out.stop = stop_signal(final.choices[0].finish_reason, CHAT_COMPLETE, CHAT_CUT)
        out.text = message.content or ""
        for tc in message.tool_calls or []:
            function = tc.function
            out.calls.append(from_argument_text(tc.id, function.name, function.arguments))
        return out


if __name__ == "__main__":
    sys.exit(main(LiteLLMAdapter()))
