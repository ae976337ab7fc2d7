#!/usr/bin/env python3
"""toolcert adapter for LangChain (`langchain-core` with `langchain-openai`), ChatOpenAI
streaming over Chat Completions.

What it drives, per stream: `ChatOpenAI(..., http_client=httpx2.Client(transport=
MockTransport))` with the stream's tools bound (`bind_tools`), then `.stream("toolcert")`;
the `AIMessageChunk`s are summed with `+`, as LangChain's docs show for streamed tool calls.

What it reports, from the summed message: each entry of `tool_calls` as `dispatchable` with
its `args` exactly as LangChain hands them over (LangChain parses the argument text with
`parse_partial_json`); each entry of `invalid_tool_calls` as `failed(unparseable)` with its
`args` string as `raw`. Text = the summed `content`. No layout. `response_metadata
["finish_reason"]` is not a per-call flag and is not consulted. An exception is a turn error
(`upstream` for an `openai.APIError` from an error chunk, `malformed` for undecodable event
data, `other` otherwise).

    toolcert certify --subject 'exec:examples/sdks/python/.venv/bin/python examples/sdks/python/langchain_openai_sdk.py' \
        --level bytes --dialect openai-chat --no-schema
"""

from __future__ import annotations

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the adapters
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from openai_chat import BASE_URL, chat_tools, classify_openai  # noqa: E402
from sdk_harness import (  # noqa: E402
    QUIRKS,
    CHAT_COMPLETE,
    CHAT_CUT,
    SdkCall,
    main,
    Outcome,
    SdkAdapter,
    dispatch,
    httpx2_client,
    stop_signal,
    unparseable,
)


class LangChainOpenAIAdapter(SdkAdapter):
    name = "langchain-openai-python"
    dialects = ("openai-chat",)
    sdk_package = "langchain-core langchain-openai openai"
    homepage = "https://pypi.org/project/langchain-openai/"
    preload_modules = ("langchain_openai",)
    quirks = QUIRKS  # an SDK reads whatever bytes come: every server profile
    policy_doc = "https://platform.openai.com/docs/api-reference/chat/object#chat/object-choices"

    def setup(self, slot) -> None:
        import openai
        from langchain_openai import ChatOpenAI

        self.openai = openai
        self.llm = ChatOpenAI(model="gpt-4.1", api_key="toolcert-dummy", base_url=BASE_URL, max_retries=0,
                              http_client=httpx2_client(slot))

    def classify(self, e: BaseException) -> str:
        return classify_openai(self.openai, e)

    def run(self, slot, feed, tools, dialect) -> Outcome:
        out = Outcome()
        model = self.llm.bind_tools(chat_tools(tools)) if tools else self.llm
        message = None
        shown: list[str] = []
        with SdkCall(self, out, shown):
            for chunk in model.stream("toolcert"):
                if isinstance(chunk.content, str):
                    shown.append(chunk.content)
                message = chunk if message is None else message + chunk
        if out.error is not None:
            return out

        if message is None:
            return out
        # LangChain hands the provider's finish_reason over in response_metadata.
        out.stop = stop_signal((message.response_metadata or {}).get("finish_reason"), CHAT_COMPLETE, CHAT_CUT)
        content = message.content
        if isinstance(content, str):
            out.text = content
        else:  # a list of content blocks
            out.text = "".join(
                b if isinstance(b, str) else (b.get("text") or "")
                for b in content
                if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
            )
        # The argument text LangChain summed for each call (`tool_call_chunks[].args`), kept as
        # the call's raw text: what a caller's check that withholds the call reports (the
        # documented policy), rather than the adapter's re-serialisation of the parsed args.
        # An id two entries share says nothing of which text is whose: no raw text for it.
        chunks = getattr(message, "tool_call_chunks", None) or []
        ids = [c.get("id") for c in chunks]
        raw = {c.get("id"): c.get("args") for c in chunks
               if isinstance(c.get("args"), str) and ids.count(c.get("id")) == 1}
        for tc in message.tool_calls:
            out.calls.append(dispatch(tc.get("id"), tc.get("name"), tc.get("args"), raw.get(tc.get("id"))))
        for itc in message.invalid_tool_calls:
            out.calls.append(unparseable(itc.get("id"), itc.get("name"), itc.get("args")))
        return out


if __name__ == "__main__":
    sys.exit(main(LangChainOpenAIAdapter()))
