"""Shared plumbing for the real-SDK adapters: the toolcert subprocess protocol (version 1,
docs/PROTOCOL.md) at the `bytes` level, exact-bytes transports, and the mapping of what an
SDK hands its caller onto outcomes.

The protocol loop and the strict JSON reading are copied from the stdlib template
(examples/adapters/python/adapter.py, parts 1 and 5); the accumulator is replaced by a real
SDK. Each adapter file (anthropic_sdk.py, openai_chat.py, ...) defines a subclass of
`SdkAdapter` and calls `serve(TheAdapter())`.

How a stream is run
-------------------
The harness delivers a stream's transport chunks one by one, then its end. A real SDK pulls
its bytes from an HTTP response and hands results only once the stream is over, so the
adapter collects the chunks and, at the stream's end step, runs the SDK over them in one go:
the SDK's own HTTP client is given a transport (`httpx2.MockTransport`, or `httpx` for older
code) whose response body yields exactly those chunks, in order, unchanged. The SDK pulls
them itself, so it sees every chunk boundary the harness made. Streams of a case are run one
after another (each at its end step), each as its own request on one shared client.

How the body ends (the stream's `end`):
  eof         the body iterator finishes: the server closed the stream;
  disconnect  reading past the last chunk raises `RemoteProtocolError` ("peer closed
              connection without sending complete message body"), what httpx raises when a
              connection drops mid-body;
  cancel      reading past the last chunk raises `asyncio.CancelledError`, as cancelling the
              task that reads the stream does.

Mapping onto outcomes
---------------------
- A call in the SDK's final result (its documented final-message API), with an object input
  and no error or flag on it, is `dispatchable` with exactly the input the SDK hands over.
  An input that is not an object is reported as it is handed over (the harness judges it).
- Where an SDK hands the arguments as a string (OpenAI Chat/Responses, litellm), the caller
  must parse them: the adapter parses them strictly (RFC 8259, as serde_json reads them, see
  `strict_loads`), so parsing is never the finding; text that is not one JSON object is
  reported as `failed(unparseable)` with the string as `raw`.
- Where an SDK flags a call as invalid (LangChain `invalid_tool_calls`), the call is
  `failed(unparseable)` with the SDK's raw string.
- An exception out of the SDK is a turn error: class `upstream` for an API error event,
  `truncated` for an exception that says the output was cut, `incomplete` for the dropped
  connection or cancel the adapter made (or an SDK error saying the stream ended before its
  terminal event), `malformed` for undecodable event data, `other` otherwise. Its stamp is the number of chunks the SDK had pulled when it
  raised, and `at_finish` when it had already read to the end of the body.
- Outcomes carry `units` = the stream's chunk count and `at_finish` = true: they are handed
  over only after the body ended.
- What the SDK leaves out is left out (a missing outcome).
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
import os
import platform
import re
import sys
import threading
import traceback
from typing import Any, Iterator

PROTOCOL_VERSION = 1


# --------------------------------------------------------------------------------------
# Protocol output: stdout is the protocol channel only. Everything else (an SDK's prints,
# warnings, C libraries writing to fd 1) goes to stderr.
# --------------------------------------------------------------------------------------

def _take_stdout():
    proto = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto


# --------------------------------------------------------------------------------------
# Strict JSON, as serde_json reads it (copied from the template, part 1)
# --------------------------------------------------------------------------------------

class NotJson(ValueError):
    pass


def _refuse_constant(name: str):
    raise NotJson(f"{name} is not JSON")


def _int(text: str):
    if text == "-0":
        return -0.0
    if len(text) <= 20:
        v = int(text)
        if -(1 << 63) <= v < (1 << 64):
            return v
    f = float(text)
    if math.isinf(f):
        raise NotJson(f"number out of range: {text[:40]}")
    return f


def _float(text: str):
    f = float(text)
    if math.isinf(f):
        raise NotJson(f"number out of range: {text[:40]}")
    return f


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
MAX_DEPTH = 128


def _needs_check(text: str) -> bool:
    return (
        text.count("[") + text.count("{") >= MAX_DEPTH - 1
        or _SURROGATE_ESCAPE.search(text) is not None
    )


def _check_tree(value) -> None:
    stack = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, str):
            if not v.isascii() and _SURROGATE.search(v):
                raise NotJson("lone surrogate in a string")
        elif isinstance(v, list):
            if depth + 1 >= MAX_DEPTH:
                raise NotJson("nested too deeply")
            stack.extend((x, depth + 1) for x in v)
        elif isinstance(v, dict):
            if depth + 1 >= MAX_DEPTH:
                raise NotJson("nested too deeply")
            for k, x in v.items():
                if not k.isascii() and _SURROGATE.search(k):
                    raise NotJson("lone surrogate in a key")
                stack.append((x, depth + 1))


def strict_loads(text: str):
    """Exactly one JSON document (RFC 8259), as strictly as serde_json reads it; raises
    ValueError otherwise."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_int=_int, parse_float=_float)
    except RecursionError as e:
        raise NotJson("nested too deeply") from e
    if _needs_check(text):
        _check_tree(value)
    return value


# --------------------------------------------------------------------------------------
# Values an SDK hands over, written back as JSON the harness can read
# --------------------------------------------------------------------------------------

# The reply may nest at most 192 levels; the envelope around args takes 5.
_WIRE_DEPTH = 180


def wire_value(value: Any, depth: int = 0) -> Any:
    """What an SDK handed over, as a JSON value the harness reads back exactly.

    Python values that JSON cannot carry are replaced by a marker string, so that the harness
    still sees a dispatch (and judges it against the model's text): a non-finite float
    (`"<non-finite float nan>"`), a string with a lone surrogate (each surrogate becomes
    U+FFFD), an integer beyond what a double holds (its float, or a marker), nesting deeper
    than a reply may carry (`"<nested too deeply>"`), and any other Python object (its repr).
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if -(1 << 63) <= value < (1 << 64):
            return value
        try:
            f = float(value)
        except OverflowError:
            return f"<integer out of range: {str(value)[:40]}>"
        return f if not math.isinf(f) else f"<integer out of range: {str(value)[:40]}>"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return f"<non-finite float {value!r}>"
        return value
    if isinstance(value, str):
        if not value.isascii() and _SURROGATE.search(value):
            return _SURROGATE.sub("\ufffd", value)
        return value
    if depth >= _WIRE_DEPTH:
        return "<nested too deeply>"
    if isinstance(value, (list, tuple)):
        return [wire_value(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(wire_value(k, depth + 1)): wire_value(v, depth + 1) for k, v in value.items()}
    return f"<{type(value).__name__}: {value!r}>"[:200]


# --------------------------------------------------------------------------------------
# What a stream run reports
# --------------------------------------------------------------------------------------

class Call:
    """One call as the SDK handed it over."""

    __slots__ = ("call_id", "name", "kind", "value")

    def __init__(self, call_id, name, kind: str, value):
        self.call_id = call_id
        self.name = name
        self.kind = kind  # "dispatch" (value: the input) or "unparseable" (value: raw text)
        self.value = value


def dispatch(call_id, name, args) -> Call:
    return Call(call_id, name, "dispatch", args)


def unparseable(call_id, name, raw) -> Call:
    return Call(call_id, name, "unparseable", raw)


def from_argument_text(call_id, name, text) -> Call:
    """A call whose SDK hands the arguments as text: the caller parses them strictly."""
    if text is None:
        text = ""
    if not isinstance(text, str):
        return dispatch(call_id, name, text)
    if text == "":
        return dispatch(call_id, name, {})  # no argument bytes: no arguments
    try:
        args = strict_loads(text)
    except ValueError:
        return unparseable(call_id, name, text)
    if not isinstance(args, dict):
        return unparseable(call_id, name, text)
    return dispatch(call_id, name, args)


class TurnError(Exception):
    def __init__(self, cls: str, detail: str):
        super().__init__(f"{cls}: {detail}")
        self.cls = cls
        self.detail = detail


class Outcome:
    """What one stream gave the caller: the calls of the final result, the text, optionally
    the block layout, or the error that ended the turn."""

    def __init__(self):
        self.calls: list[Call] = []
        self.text = ""
        self.layout: list[dict] | None = None
        self.error: TurnError | None = None


# --------------------------------------------------------------------------------------
# Exact bytes: a response body that yields the harness's chunks
# --------------------------------------------------------------------------------------

class Feed:
    """A stream's chunks, handed to the SDK's HTTP client as the response body. Counts what
    the SDK pulled, and ends the body the way the stream ended."""

    def __init__(self, chunks: list[bytes], end: str):
        self.chunks = chunks
        self.end = end
        self.pulled = 0
        self.ended = False  # the SDK read past the last chunk

    def body(self) -> Iterator[bytes]:
        for chunk in self.chunks:
            self.pulled += 1
            yield chunk
        self.ended = True
        if self.end == "disconnect":
            raise disconnect_error()
        if self.end == "cancel":
            raise asyncio.CancelledError("the caller cancelled the stream")

    # Stamps for a turn error raised while this feed was being read.
    def error_stamp(self) -> tuple[int, bool]:
        return self.pulled, self.ended


_DISCONNECT = "peer closed connection without sending complete message body (incomplete chunked read)"


def disconnect_error() -> Exception:
    import httpx2

    return httpx2.RemoteProtocolError(_DISCONNECT)


class FeedSlot:
    """The feed of the request being made: the mock transport's handler answers every request
    with the current feed's chunks."""

    def __init__(self):
        self.feed: Feed | None = None
        self.requests = 0

    def take(self) -> Feed:
        feed = self.feed
        if feed is None:
            raise RuntimeError("the SDK made a request the adapter did not expect")
        self.feed = None
        self.requests += 1
        return feed


SSE_HEADERS = {"content-type": "text/event-stream", "cache-control": "no-cache"}

# One small complete turn per dialect (the text "ok", no call), for `SdkAdapter.warm_up`.
WARM_UP = {
    "anthropic": (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_warm","type":"message",'
        b'"role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,'
        b'"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"text","text":""}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"ok"}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn",'
        b'"stop_sequence":null},"usage":{"output_tokens":1}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    ),
    "openai-chat": (
        b'data: {"id":"chatcmpl-warm","object":"chat.completion.chunk","created":0,"model":"gpt-4.1",'
        b'"choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":null}]}\n\n'
        b'data: {"id":"chatcmpl-warm","object":"chat.completion.chunk","created":0,"model":"gpt-4.1",'
        b'"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
        b'data: [DONE]\n\n'
    ),
    "openai-responses": (
        b'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_warm",'
        b'"object":"response","created_at":0,"status":"in_progress","model":"gpt-4.1","output":[],'
        b'"parallel_tool_calls":true,"tool_choice":"auto","tools":[]}}\n\n'
        b'event: response.output_item.added\ndata: {"type":"response.output_item.added","sequence_number":1,'
        b'"output_index":0,"item":{"type":"message","id":"msg_warm","role":"assistant","status":"in_progress",'
        b'"content":[]}}\n\n'
        b'event: response.content_part.added\ndata: {"type":"response.content_part.added","sequence_number":2,'
        b'"item_id":"msg_warm","output_index":0,"content_index":0,"part":{"type":"output_text","text":"",'
        b'"annotations":[]}}\n\n'
        b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":3,'
        b'"item_id":"msg_warm","output_index":0,"content_index":0,"delta":"ok"}\n\n'
        b'event: response.completed\ndata: {"type":"response.completed","sequence_number":4,"response":'
        b'{"id":"resp_warm","object":"response","created_at":0,"status":"completed","model":"gpt-4.1",'
        b'"output":[{"type":"message","id":"msg_warm","role":"assistant","status":"completed","content":'
        b'[{"type":"output_text","text":"ok","annotations":[]}]}],"parallel_tool_calls":true,'
        b'"tool_choice":"auto","tools":[]}}\n\n'
    ),
}


def httpx2_client(slot: FeedSlot):
    import httpx2

    def handler(request):
        feed = slot.take()
        return httpx2.Response(200, headers=SSE_HEADERS, content=feed.body(), request=request)

    return httpx2.Client(transport=httpx2.MockTransport(handler))


def httpx_client(slot: FeedSlot):
    import httpx

    def handler(request):
        feed = slot.take()
        return httpx.Response(200, headers=SSE_HEADERS, content=feed.body(), request=request)

    return httpx.Client(transport=httpx.MockTransport(handler))


def exception_chain(e: BaseException):
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        yield e
        e = e.__cause__ or e.__context__


SDK_FAILURES = (Exception, asyncio.CancelledError)
"""What a call into an SDK may raise that is a turn error (the cancel is the transport's)."""


def describe(e: BaseException) -> str:
    text = f"{type(e).__module__}.{type(e).__qualname__}: {e}"
    return text[:2000]


# --------------------------------------------------------------------------------------
# The adapter interface
# --------------------------------------------------------------------------------------

class SdkAdapter:
    """Subclass: set `name`, `dialects`, `sdk_package` (the distributions whose versions are
    reported); implement `setup(slot)` and `run(slot, feed, tools, dialect) -> Outcome` (make
    the request, consume it, read the final result; an exception out of the SDK is caught and
    set as the Outcome's error, an exception out of the adapter itself propagates and is
    answered `errored`); override `classify(exception) -> str` for the SDK's own errors."""

    name = "sdk"
    dialects: tuple[str, ...] = ()
    sdk_package = ""
    homepage = ""
    # Modules imported in the background from the moment the process starts (see `prepare`).
    preload_modules: tuple[str, ...] = ()

    def prepare(self, slot: "FeedSlot") -> None:
        """Runs in a background thread from the moment the process starts: imports the SDK,
        makes the client (`setup`) and sends one small complete stream through it (`warm_up`),
        so that the SDK's first-call costs are paid before the first case. Some SDKs take
        seconds to import on a loaded machine (LiteLLM ~6-9 s), while every protocol request
        has its own timeout (10 s by default); `serve` spreads the wait over `start`,
        `configure` and the first `run`."""
        import importlib

        for module in self.preload_modules:
            importlib.import_module(module)
        self.setup(slot)
        self.warm_up(slot)

    def warm_up(self, slot: "FeedSlot") -> None:
        dialect = self.dialects[0]
        feed = Feed([WARM_UP[dialect]], "eof")
        slot.feed = feed
        try:
            got = self.run(slot, feed, [], dialect)
        finally:
            slot.feed = None
        if got.error is not None or got.text != "ok":
            print(f"warm-up stream gave {got.error or repr(got.text)}", file=sys.stderr)

    def implementation(self) -> dict:
        return {
            "name": self.name,
            "language": "python",
            "version": self.version(),
            "homepage": self.homepage,
            "language_version": platform.python_version(),
            "levels": ["bytes"],
            "dialects": list(self.dialects),
            "quirks": [],
            "capabilities": [],
        }

    def version(self) -> str:
        from importlib.metadata import version

        return " ".join(f"{p}=={version(p)}" for p in self.sdk_package.split())

    def setup(self, slot: "FeedSlot") -> None:
        """Called once, before the first run: import the SDK, make the client (on a transport
        that answers from `slot`)."""

    def run(self, slot: FeedSlot, feed: Feed, tools: list[dict], dialect: str) -> Outcome:
        raise NotImplementedError

    def classify(self, e: BaseException) -> str:
        return classify_common(e)


def is_transport_end(x: BaseException) -> bool:
    """The way the adapter ended the body (a dropped connection, a cancel), or any other
    transport error: not the stream's content."""
    if isinstance(x, asyncio.CancelledError):
        return True
    root = type(x).__module__.split(".")[0]
    return root in ("httpx", "httpx2", "httpcore") and any(c.__name__ == "TransportError" for c in type(x).__mro__)


# What SDKs say when the body ended before the stream's terminal event.
_ENDED_EARLY = ("Stream ended before a finish_reason was received",)


def ended_early(chain: list[BaseException]) -> bool:
    """The turn failed because the stream ended early: the dropped connection or the cancel
    the adapter made, or the SDK saying the body ended before its terminal event."""
    return any(is_transport_end(x) or any(m in str(x) for m in _ENDED_EARLY) for x in chain)


def classify_common(e: BaseException) -> str:
    chain = list(exception_chain(e))
    if ended_early(chain):
        return "incomplete"
    for x in chain:
        if isinstance(x, (json.JSONDecodeError, UnicodeDecodeError)):
            return "malformed"
    return "other"


# --------------------------------------------------------------------------------------
# The protocol (after the template, part 5)
# --------------------------------------------------------------------------------------

def _bytes_of(payload: dict) -> bytes:
    text = payload.get("text")
    if text is not None:
        return text.encode("utf-8")
    return base64.b64decode(payload["bytes"], validate=True)


def _call_outcome(call: Call, units: int) -> dict:
    stamp = {"units": units, "at_finish": True}
    call_id = call.call_id if isinstance(call.call_id, str) else ("" if call.call_id is None else str(call.call_id))
    name = call.name if isinstance(call.name, str) else ("" if call.name is None else str(call.name))
    if call.kind == "dispatch":
        return {"outcome": "dispatchable", "call_id": call_id, "name": name,
                "args": wire_value(call.value), **stamp}
    raw = call.value if isinstance(call.value, str) else ("" if call.value is None else json.dumps(wire_value(call.value)))
    return {"outcome": "failed", "reason": "unparseable", "call_id": call_id, "name": name,
            "raw": wire_value(raw), **stamp}


def run_stream(adapter: SdkAdapter, slot: FeedSlot, stream: dict, chunks: list[bytes], dialect: str) -> dict:
    feed = Feed(chunks, stream.get("end", "eof"))
    slot.feed = feed
    result: dict = {"outcomes": [], "text": ""}
    try:
        got = adapter.run(slot, feed, stream.get("tools") or [], dialect)
    except TurnError as e:
        units, at_finish = feed.error_stamp()
        result["error"] = {"class": e.cls, "detail": e.detail[:2000], "units": units, "at_finish": at_finish}
        return result
    finally:
        slot.feed = None
    units = len(chunks)
    if got.error is not None:
        pulled, at_finish = feed.error_stamp()
        result["error"] = {"class": got.error.cls, "detail": got.error.detail[:2000],
                           "units": pulled, "at_finish": at_finish}
    else:
        result["outcomes"] = [_call_outcome(c, units) for c in got.calls]
        if got.layout is not None:
            result["layout"] = got.layout
    result["text"] = wire_value(got.text or "")
    return result


def run_case(adapter: SdkAdapter, slot: FeedSlot, case: dict, dialect: str) -> list[dict]:
    streams = case["streams"]
    chunks: list[list[bytes]] = [[] for _ in streams]
    results: list[dict | None] = [None] * len(streams)
    for s, k in case["order"]:
        units = streams[s]["units"]
        if k < len(units):
            chunks[s].append(_bytes_of(units[k]))
        else:
            results[s] = run_stream(adapter, slot, streams[s], chunks[s], dialect)
    for s, r in enumerate(results):
        if r is None:  # a stream the order never ended (not expected): report what it gave
            results[s] = run_stream(adapter, slot, streams[s], chunks[s], dialect)
    return results  # type: ignore[return-value]


def serve(adapter: SdkAdapter) -> int:
    proto = _take_stdout()
    stdin = sys.stdin.buffer
    dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode

    def send(message: dict) -> None:
        proto.write(dumps(message).encode("utf-8") + b"\n")

    dialect = None
    slot = FeedSlot()
    # Import the SDK, make the client and warm it up while the handshake goes on; each request
    # waits for it a while, so a slow start is spread over the start, configure and first run
    # requests' timeouts.
    failure: list[str] = []

    def prepare() -> None:
        try:
            adapter.prepare(slot)
        except BaseException:
            failure.append(traceback.format_exc()[-8000:])

    loader = threading.Thread(target=prepare, name="prepare", daemon=True)
    loader.start()
    # For investigating: TOOLCERT_ADAPTER_LOG=FILE appends every run's case and results.
    log_path = os.environ.get("TOOLCERT_ADAPTER_LOG")
    log = open(log_path, "a", encoding="utf-8") if log_path else None
    for line in stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        cmd = request.get("cmd")
        if cmd == "start":
            loader.join(timeout=7)
            if request.get("version") != PROTOCOL_VERSION:
                print(f"toolcert speaks protocol {request.get('version')}, this adapter {PROTOCOL_VERSION}",
                      file=sys.stderr)
            send({"version": PROTOCOL_VERSION, "implementation": adapter.implementation()})
        elif cmd == "configure":
            level = request.get("level")
            wanted = request.get("dialect")
            if level != "bytes":
                send({"ok": False, "reason": f"{adapter.name} is a client SDK: it reads raw bytes only (level {level!r})"})
                continue
            if wanted not in adapter.dialects:
                send({"ok": False, "reason": f"{adapter.name} does not speak {wanted!r}"})
                continue
            loader.join(timeout=7)
            if failure:
                send({"ok": False, "reason": f"the SDK could not be set up: {failure[0]}"})
                continue
            dialect = wanted
            send({"ok": True})
        elif cmd == "run":
            seq = request.get("seq")
            if dialect is None:
                send({"seq": seq, "skipped": True, "reason": "not configured for a dialect this SDK speaks"})
                continue
            try:
                loader.join()
                if failure:
                    raise RuntimeError(f"the SDK could not be set up: {failure[0]}")
                results = run_case(adapter, slot, request["case"], dialect)
                if log is not None:
                    log.write(json.dumps({"case": request["case"], "results": results}) + "\n")
                    log.flush()
                send({"seq": seq, "results": results})
            except Exception as e:
                send({"seq": seq, "errored": True,
                      "context": {"message": describe(e), "traceback": traceback.format_exc()[-8000:]}})
        elif cmd == "stop":
            return 0
        else:
            print(f"unknown command {cmd!r}", file=sys.stderr)
            send({"seq": request.get("seq"), "errored": True,
                  "context": {"message": f"unknown command {cmd!r}"}})
    return 0
