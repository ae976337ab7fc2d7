#!/usr/bin/env python3
"""toolcert adapter for the Anthropic Python SDK (`anthropic`), Messages streaming.

What it drives, per stream: `client.messages.stream(...)` on a client whose HTTP transport
is an `httpx2.MockTransport` answering with the stream's exact chunks; it iterates the
events (collecting the `text` events a UI would show), then calls `get_final_message()`.

What it reports: every `tool_use` block of the final message as `dispatchable` with the
block's `input` exactly as the SDK hands it over (the SDK parses the input itself, with
`jiter` in partial mode); text = the final message's text blocks joined; layout = the order
of its text and tool_use blocks. The message's `stop_reason` is not a per-call flag and is
not consulted (see notes). An exception from the SDK is a turn error: `upstream` for the
`APIStatusError` an SSE `error` event raises, `incomplete` for the dropped connection or
cancel that ends the body early, `malformed` for undecodable event data, `other` otherwise.

    toolcert certify --subject 'exec:examples/sdks/python/.venv/bin/python examples/sdks/python/anthropic_sdk.py' \
        --level bytes --dialect anthropic --no-schema
"""

from __future__ import annotations

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the adapters
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sdk_harness import (  # noqa: E402
    SdkCall,
    main,
    Outcome,
    SdkAdapter,
    classify_common,
    dispatch,
    exception_chain,
    httpx2_client,
    ANTHROPIC_COMPLETE,
    ANTHROPIC_CUT,
    stop_signal,
)


def tool_params(tools: list[dict]) -> list[dict]:
    out = []
    for t in tools:
        schema = t.get("schema")
        out.append({
            "name": t["name"],
            "description": f"toolcert tool {t['name']}",
            "input_schema": schema if isinstance(schema, dict) else {"type": "object"},
        })
    return out


class AnthropicAdapter(SdkAdapter):
    name = "anthropic-python"
    dialects = ("anthropic",)
    sdk_package = "anthropic"
    homepage = "https://pypi.org/project/anthropic/"
    preload_modules = ("anthropic",)
    policy_doc = "https://docs.anthropic.com/en/api/handling-stop-reasons"

    def setup(self, slot) -> None:
        import anthropic

        self.anthropic = anthropic
        self.client = anthropic.Anthropic(api_key="toolcert-dummy", max_retries=0, http_client=httpx2_client(slot))

    def classify(self, e: BaseException) -> str:
        for x in exception_chain(e):
            if isinstance(x, self.anthropic.APIStatusError):
                return "upstream"
        return classify_common(e)

    def run(self, slot, feed, tools, dialect) -> Outcome:
        out = Outcome()
        shown: list[str] = []
        params = {}
        if tools:
            params["tools"] = tool_params(tools)
        with SdkCall(self, out, shown):
            with self.client.messages.stream(
                model="claude-sonnet-4-5",
                max_tokens=4096,
                messages=[{"role": "user", "content": "toolcert"}],
                **params,
            ) as stream:
                for event in stream:
                    if event.type == "text":
                        shown.append(event.text)
                message = stream.get_final_message()
                # The argument text the SDK accumulated per block index (kept on the stream,
                # not the block): the raw buffer a call the documented policy withholds had.
                bufs = getattr(stream, "_MessageStream__json_bufs", None) or {}
        if out.error is not None:
            return out
        out.stop = stop_signal(message.stop_reason, ANTHROPIC_COMPLETE, ANTHROPIC_CUT)

        text: list[str] = []
        layout: list[dict] = []
        for position, block in enumerate(message.content or []):
            kind = getattr(block, "type", None)
            if kind == "text":
                piece = getattr(block, "text", "") or ""
                text.append(piece)
                layout.append({"slot": "text", "text": piece})
            elif kind == "tool_use":
                buf = bufs.get(position)
                raw = buf.decode("utf-8", "replace") if isinstance(buf, (bytes, bytearray)) else buf
                out.calls.append(dispatch(block.id, block.name, block.input, raw if isinstance(raw, str) else None))
                layout.append({"slot": "call", "call_id": block.id})
        out.text = "".join(text)
        out.layout = layout
        return out


if __name__ == "__main__":
    sys.exit(main(AnthropicAdapter()))
