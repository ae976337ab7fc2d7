#!/usr/bin/env python3
"""toolcert adapter for boto3 (`bedrock-runtime` `converse_stream`), AWS Bedrock ConverseStream.

What it drives, per stream: `client.converse_stream(...)` on a `bedrock-runtime` client (dummy
credentials, no retries) whose endpoint's HTTP session is replaced by one that answers every
request with an `AWSResponse` (`application/vnd.amazon.eventstream`) whose raw body yields the
stream's exact chunks, in order, unchanged. botocore's own `EventStreamBuffer` frames them and
checks both CRCs, its parser turns each message into an event dict; the adapter iterates
`response["stream"]`.

boto3 hands the caller events, not a message: there is no accumulator in the SDK. The caller
assembles the tool uses, and this adapter does it as AWS's documented ConverseStream tool-use
example does: one "current" tool use, started by `contentBlockStart.start.toolUse`, whose
`delta.toolUse.input` strings are joined, closed (and its input parsed) at the next
`contentBlockStop`; text deltas joined into the current text block; `messageStop.stopReason`
kept. `contentBlockIndex` is not consulted (the example does not consult it). The joined input
is parsed strictly (RFC 8259): one JSON object is `dispatchable`, anything else
`failed(unparseable)` with the string as `raw`; a tool use with no input is `{}`. A tool use
still open when the stream ends is left out (the example appends a block only at its stop).

Errors: botocore's `EventStreamError` (an exception message: modelStreamErrorException,
throttlingException, ...) is `upstream`; a framing error botocore raises (`ChecksumMismatch`,
`InvalidPayloadLength`, `InvalidHeadersLength`, `DuplicateHeader`, `ParserError`) is
`malformed`; the dropped connection or cancel the adapter made is `incomplete`; anything else
`other`.

The `documented` caller policy runs the calls only when `stopReason` is `tool_use`,
`end_turn` or `stop_sequence` (AWS: a tool use is requested when the stop reason is
`tool_use`; `max_tokens`, `guardrail_intervened`, `content_filtered` cut the turn).

    toolcert certify --subject 'exec:examples/sdks/python/.venv/bin/python examples/sdks/python/bedrock_boto3.py' \
        --level bytes --dialect bedrock --no-schema
"""

from __future__ import annotations

import os
import struct
import sys
import zlib

sys.dont_write_bytecode = True  # no __pycache__ beside the adapters
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sdk_harness import (  # noqa: E402
    Feed,
    SdkCall,
    main,
    Outcome,
    SdkAdapter,
    classify_common,
    exception_chain,
    ended_early,
    from_argument_text,
    stop_signal,
)

ENDPOINT = "http://toolcert.invalid"
MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
BEDROCK_COMPLETE = {"tool_use", "end_turn", "stop_sequence"}
BEDROCK_CUT = {"max_tokens", "guardrail_intervened", "content_filtered", "model_context_window_exceeded"}
EVENTSTREAM_HEADERS = {"content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "toolcert"}


def _message(event_type: str, payload: bytes) -> bytes:
    """One event stream message (for the warm-up stream only: the cases' bytes are toolcert's)."""
    headers = b""
    for name, value in ((":event-type", event_type), (":content-type", "application/json"),
                        (":message-type", "event")):
        headers += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(value)) + value.encode()
    prelude = struct.pack(">II", 16 + len(headers) + len(payload), len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


WARM_UP = b"".join((
    _message("messageStart", b'{"role":"assistant"}'),
    _message("contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"text":"ok"}}'),
    _message("contentBlockStop", b'{"contentBlockIndex":0}'),
    _message("messageStop", b'{"stopReason":"end_turn"}'),
))


def tool_config(tools: list[dict]) -> dict:
    specs = []
    for t in tools:
        schema = t.get("schema")
        specs.append({"toolSpec": {
            "name": t["name"],
            "description": f"toolcert tool {t['name']}",
            "inputSchema": {"json": schema if isinstance(schema, dict) else {"type": "object"}},
        }})
    return {"tools": specs}


class _Raw:
    """The body botocore reads an event stream from: the feed's chunks, one per read."""

    def __init__(self, feed: Feed):
        self.feed = feed

    def stream(self, **_kwargs):
        import urllib3

        try:
            yield from self.feed.body()
        except Exception as e:
            if type(e).__name__ == "RemoteProtocolError":
                # What urllib3 raises when a connection drops mid-body (the cause kept).
                raise urllib3.exceptions.ProtocolError("Connection broken: IncompleteRead") from e
            raise

    def close(self):
        pass


class _Session:
    """botocore's HTTP session, answering from the feed slot."""

    def __init__(self, slot):
        self.slot = slot

    def send(self, request):
        from botocore.awsrequest import AWSResponse

        return AWSResponse(request.url, 200, dict(EVENTSTREAM_HEADERS), _Raw(self.slot.take()))

    def close(self):
        pass


class Boto3BedrockAdapter(SdkAdapter):
    name = "python-boto3-bedrock"
    dialects = ("bedrock",)
    sdk_package = "boto3 botocore"
    homepage = "https://pypi.org/project/boto3/"
    preload_modules = ("boto3", "botocore")
    policy_doc = "https://docs.aws.amazon.com/bedrock/latest/userguide/tool-use-examples.html"

    def setup(self, slot) -> None:
        import boto3
        import botocore.exceptions
        from botocore.config import Config

        self.botocore = botocore
        self.client = boto3.client(
            "bedrock-runtime",
            region_name="us-east-1",
            endpoint_url=ENDPOINT,
            aws_access_key_id="toolcert",
            aws_secret_access_key="toolcert",
            config=Config(retries={"max_attempts": 1, "mode": "standard"}),
        )
        self.client._endpoint.http_session = _Session(slot)

    def warm_up(self, slot) -> None:
        feed = Feed([WARM_UP], "eof")
        slot.feed = feed
        try:
            got = self.run(slot, feed, [], "bedrock")
        finally:
            slot.feed = None
        if got.error is not None or got.text != "ok":
            print(f"warm-up stream gave {got.error or repr(got.text)}", file=sys.stderr)

    def classify(self, e: BaseException) -> str:
        chain = list(exception_chain(e))
        if ended_early(chain):
            return "incomplete"
        for x in chain:
            if isinstance(x, self.botocore.exceptions.EventStreamError):
                return "upstream"
        for x in chain:
            if type(x).__name__ in ("ChecksumMismatch", "InvalidPayloadLength", "InvalidHeadersLength",
                                    "DuplicateHeader", "ParserError", "ResponseParserError"):
                return "malformed"
        return classify_common(e)

    def run(self, slot, feed, tools, dialect) -> Outcome:
        out = Outcome()
        shown: list[str] = []
        params = {}
        if tools:
            params["toolConfig"] = tool_config(tools)
        # The documentation example's state: the message's blocks, the current tool use and text.
        content: list[dict] = []
        tool_use: dict = {}
        text = ""
        stop_reason = None
        with SdkCall(self, out, shown):
            response = self.client.converse_stream(
                modelId=MODEL,
                messages=[{"role": "user", "content": [{"text": "toolcert"}]}],
                **params,
            )
            for event in response["stream"]:
                if "contentBlockStart" in event:
                    tool = event["contentBlockStart"].get("start", {}).get("toolUse")
                    if tool is not None:
                        tool_use = {"toolUseId": tool.get("toolUseId"), "name": tool.get("name")}
                elif "contentBlockDelta" in event:
                    delta = event["contentBlockDelta"].get("delta", {})
                    if "toolUse" in delta:
                        tool_use["input"] = tool_use.get("input", "") + delta["toolUse"].get("input", "")
                    elif "text" in delta:
                        text += delta["text"]
                        shown.append(delta["text"])
                elif "contentBlockStop" in event:
                    if "toolUseId" in tool_use:
                        content.append({"toolUse": tool_use})
                        tool_use = {}
                    elif text:
                        content.append({"text": text})
                        text = ""
                elif "messageStop" in event:
                    stop_reason = event["messageStop"].get("stopReason")
        if out.error is not None:
            return out
        out.stop = stop_signal(stop_reason, BEDROCK_COMPLETE, BEDROCK_CUT)
        out.stop_detail = stop_reason
        out.text = "".join(b["text"] for b in content if "text" in b)
        for block in content:
            if "toolUse" in block:
                t = block["toolUse"]
                out.calls.append(from_argument_text(t.get("toolUseId"), t.get("name"), t.get("input", "")))
        return out


if __name__ == "__main__":
    sys.exit(main(Boto3BedrockAdapter()))
