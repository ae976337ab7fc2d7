"""Shared plumbing for the real-SDK adapters, on the `toolcert_adapter` package (python/,
installed into the SDK venv by install.sh): the package's protocol loop (`serve`, bytes level)
and strict JSON, plus what only a real SDK needs: exact-bytes transports, the caller policy,
and the mapping of what an SDK hands its caller onto outcomes.

Each adapter file (anthropic_sdk.py, openai_chat.py, ...) defines a subclass of `SdkAdapter`
and calls `main(TheAdapter())`.

How a stream is run
-------------------
The harness delivers a stream's transport chunks one by one, then its end. A real SDK pulls
its bytes from an HTTP response and hands results only once the stream is over, so the
adapter collects the chunks (the package's `feed`) and, at the stream's end (`finish`), runs
the SDK over them in one go: the SDK's own HTTP client is given a transport
(`httpx2.MockTransport`, or `httpx` for older code) whose response body yields exactly those
chunks, in order, unchanged. The SDK pulls them itself, so it sees every chunk boundary the
harness made. Streams of a case are run one after another (each at its end), each as its own
request on one shared client.

How the body ends (the stream's `end`):
  eof         the body iterator finishes: the server closed the stream;
  disconnect  reading past the last chunk raises `RemoteProtocolError` ("peer closed
              connection without sending complete message body"), what httpx raises when a
              connection drops mid-body;
  cancel      reading past the last chunk raises `asyncio.CancelledError`, as cancelling the
              task that reads the stream does.

The caller policy (docs/CERTIFICATION.md, "Caller policies")
-------------------------------------------------------------
`--policy as-handed-over` (the default; or TOOLCERT_POLICY): every call the SDK's final result
offers is dispatched, unless the SDK raised or marked that very call. `--policy documented`:
the caller also makes the check the SDK's documentation tells it to make before running tools
(the message's stop reason, finish reason or response status, `Outcome.stop`): when that says
the turn was cut, every call is `failed(truncated)`; when it is missing or says the response
never finished, `failed(abandoned)`. The policy is declared in the handshake
(`implementation.policy`).

Mapping onto outcomes
---------------------
- A call in the SDK's final result (its documented final-message API), with an object input
  and no error or flag on it, is `dispatchable` with exactly the input the SDK hands over.
  An input that is not an object is reported as it is handed over (the harness judges it).
- Where an SDK hands the arguments as a string (OpenAI Chat/Responses, litellm), the caller
  must parse them: the adapter parses them strictly (the package's `loads`: RFC 8259, as
  serde_json reads them, numbers kept as written), so parsing is never the finding; text that
  is not one JSON object is `failed(unparseable)` with the string as `raw`; `""` is `{}` (no
  argument bytes, docs/SPEC.md section 2).
- Where an SDK flags a call as invalid (LangChain `invalid_tool_calls`), the call is
  `failed(unparseable)` with the SDK's raw string.
- An exception the SDK raised is a turn error: class `upstream` for an API error event,
  `truncated` for an exception that says the output was cut, `incomplete` for the dropped
  connection or cancel the adapter made (or an SDK error saying the stream ended before its
  terminal event), `malformed` for undecodable event data, `other` otherwise. Its stamp is
  the number of chunks the SDK had pulled when it raised, and `at_finish` when it had
  already read to the end of the body. An exception raised by the adapter's own code is not
  the SDK's: it propagates, and the package records it as the stream's crash, with its
  traceback (SUBJECT-CRASH).
- Outcomes carry `units` = the stream's chunk count and `at_finish` = true: they are handed
  over only after the body ended.
- What the SDK leaves out is left out (a missing outcome).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import sys
import threading
import traceback
from decimal import Decimal
from typing import Any, Iterator

import toolcert_adapter
from toolcert_adapter import QUIRKS, TurnError, loads  # noqa: F401 (QUIRKS: for the adapters)

POLICIES = ("as-handed-over", "documented")


def policy_from(argv: list[str]) -> str:
    """`--policy NAME` on the command line, else TOOLCERT_POLICY, else `as-handed-over`."""
    policy = os.environ.get("TOOLCERT_POLICY") or "as-handed-over"
    if "--policy" in argv:
        i = argv.index("--policy")
        policy = argv[i + 1] if i + 1 < len(argv) else ""
    if policy not in POLICIES:
        print(f"unknown caller policy {policy!r} (one of {', '.join(POLICIES)})", file=sys.stderr)
        sys.exit(2)
    return policy


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
# Values an SDK hands over, written back as JSON the harness can read
# --------------------------------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")
# The reply may nest at most 192 levels; the envelope around args takes 5.
# As deep as a reply may carry arguments (docs/PROTOCOL.md: 512 levels of arguments inside the
# reply's envelope): a shallower cap would report a dispatched deep document as another value.
_WIRE_DEPTH = 512


def wire_value(value: Any, depth: int = 0) -> Any:
    """What an SDK handed over, as a JSON value the harness reads back exactly.

    Python values that JSON cannot carry are replaced by a marker string, so that the harness
    still sees a dispatch (and judges it against the model's text): a non-finite float
    (`"<non-finite float nan>"`), a string with a lone surrogate (each surrogate becomes
    U+FFFD), an integer beyond what a double holds (its float, or a marker), nesting deeper
    than a reply may carry (`"<nested too deeply>"`), and any other Python object (its repr).
    Numbers the adapter parsed itself (`JsonNumber`) go out as written.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, Decimal):
        return value if value.is_finite() else f"<non-finite number {value!r}>"
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
    """One call as the SDK handed it over. `raw`: the SDK's argument text, when it keeps one
    (reported as the buffer if the caller policy does not run the call)."""

    __slots__ = ("call_id", "name", "kind", "value", "raw")

    def __init__(self, call_id, name, kind: str, value, raw=None):
        self.call_id = call_id
        self.name = name
        self.kind = kind  # "dispatch" (value: the input) or "unparseable" (value: raw text)
        self.value = value
        self.raw = raw


def dispatch(call_id, name, args, raw=None) -> Call:
    return Call(call_id, name, "dispatch", args, raw)


def unparseable(call_id, name, raw) -> Call:
    return Call(call_id, name, "unparseable", raw, raw)


def from_argument_text(call_id, name, text) -> Call:
    """A call whose SDK hands the arguments as text: the caller parses them strictly. Any one
    JSON document is offered for dispatch as written, an object or not (docs/SPEC.md: without
    a schema the dispatcher decides), as the Node adapters' `fromText` does."""
    if text is None:
        text = ""
    if not isinstance(text, str):
        return dispatch(call_id, name, text)
    if text == "":
        return dispatch(call_id, name, {}, "")  # no argument bytes: no arguments
    try:
        args = loads(text)
    except ValueError:
        return unparseable(call_id, name, text)
    return dispatch(call_id, name, args, text)


# What the turn's stop signal (stop_reason, finish_reason, response.status) says, for the
# `documented` policy.
COMPLETE, CUT, UNFINISHED = "complete", "truncated", "abandoned"


def stop_signal(value, complete: set, cut: set) -> str:
    """What a stop reason / finish reason / status says: COMPLETE, CUT, or UNFINISHED (missing,
    or a value a caller cannot read as either: it does not run the calls)."""
    if value in complete:
        return COMPLETE
    if value in cut:
        return CUT
    return UNFINISHED


# The stop signals of each dialect (docs/SPEC.md section 2).
ANTHROPIC_COMPLETE = {"tool_use", "end_turn", "stop_sequence", "pause_turn"}
ANTHROPIC_CUT = {"max_tokens", "refusal", "model_context_window_exceeded"}
CHAT_COMPLETE = {"tool_calls", "stop", "function_call"}
CHAT_CUT = {"length", "content_filter"}


class Outcome:
    """What one stream gave the caller: the calls of the final result, the text, optionally
    the block layout, the turn's stop signal as the SDK hands it (`stop`: COMPLETE, CUT or
    UNFINISHED, with `stop_detail` the SDK's value), or the error that ended the turn."""

    def __init__(self):
        self.calls: list[Call] = []
        self.text = ""
        self.layout: list[dict] | None = None
        self.stop: str | None = None
        self.stop_detail = None
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

    async def async_body(self):
        """`body` for an async HTTP client (the same chunks, the same ends)."""
        for chunk in self.body():
            yield chunk

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


class FollowUpSlot(FeedSlot):
    """For agent layers, which make more requests than the stream's one: the first request of
    a run gets the stream; every later one (the tool results sent back, a retry prompt) a small
    complete text turn of `dialect`, so the run ends. The later requests' bodies are kept
    (`sent_back`, when the handler passes the request): they say what ran."""

    def __init__(self):
        super().__init__()
        self.dialect = "anthropic"
        self.sent_back: list[bytes] = []

    def start_run(self, dialect: str) -> None:
        self.dialect = dialect
        self.sent_back = []

    def take(self, request=None) -> "Feed":
        if self.feed is not None:
            return super().take()
        self.sent_back.append(bytes(request.content) if request is not None else b"")
        if len(self.sent_back) > 8:
            raise RuntimeError("the agent layer kept making requests after the stream's turn")
        return Feed([WARM_UP[self.dialect]], "eof")


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


def httpx2_async_client(slot: FeedSlot):
    """`httpx2_client` for SDKs that only take an async client (pydantic-ai's models)."""
    import httpx2

    async def handler(request):
        feed = slot.take()
        return httpx2.Response(200, headers=SSE_HEADERS, content=feed.async_body(), request=request)

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handler))


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


def describe(e: BaseException) -> str:
    text = f"{type(e).__module__}.{type(e).__qualname__}: {e}"
    return text[:2000]


_ADAPTER_DIR = os.path.dirname(os.path.abspath(__file__))


def raised_by_adapter(e: BaseException) -> bool:
    """The exception was raised by the adapter's own code (its innermost frame is in a file
    of examples/sdks/python), not by the SDK or what the SDK called."""
    tb = e.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return False
    return os.path.dirname(os.path.abspath(last.tb_frame.f_code.co_filename)) == _ADAPTER_DIR


def sdk_failure(e: BaseException) -> bool:
    """A turn error, not an adapter error: the transport end the adapter made (the dropped
    connection, the cancel) anywhere in the chain, or an exception the SDK itself raised.
    Anything the adapter's own code raised is an adapter bug."""
    if any(is_transport_end(x) for x in exception_chain(e)):
        return True
    return not raised_by_adapter(e)


class SdkCall:
    """`with SdkCall(adapter, out, shown):` around the calls into the SDK: an exception the
    SDK raised becomes the turn's error (with the text shown so far); one the adapter raised
    propagates (the stream's crash)."""

    def __init__(self, adapter: "SdkAdapter", out: Outcome, shown: list[str]):
        self.adapter, self.out, self.shown = adapter, out, shown

    def __enter__(self):
        return self

    def __exit__(self, kind, e, tb):
        if e is None or not isinstance(e, (Exception, asyncio.CancelledError)) or not sdk_failure(e):
            return False
        self.out.error = TurnError(self.adapter.classify(e), describe(e))
        self.out.text = "".join(self.shown)
        return True


# --------------------------------------------------------------------------------------
# The adapter interface
# --------------------------------------------------------------------------------------

class SdkAdapter:
    """Subclass: set `name`, `dialects`, `sdk_package` (the distributions whose versions are
    reported), `quirks` (the server profiles' wire behaviours it can be fed: an SDK reads
    whatever bytes come, so an adapter declares `QUIRKS`, all of them); implement `setup(slot)` and `run(slot, feed, tools,
    dialect) -> Outcome` (make the request inside `with SdkCall(...)`, consume it, read the
    final result, set `Outcome.stop` from the stop signal the SDK hands over); override
    `classify(exception) -> str` for the SDK's own errors."""

    name = "sdk"
    dialects: tuple[str, ...] = ()
    quirks: tuple[str, ...] = QUIRKS
    sdk_package = ""
    homepage = ""
    # Where the SDK's documentation tells a caller what to check before running tools.
    policy_doc = ""
    # Modules imported in the background from the moment the process starts (see `prepare`).
    preload_modules: tuple[str, ...] = ()
    policy = "as-handed-over"

    def prepare(self, slot: "FeedSlot") -> None:
        """Runs in a background thread from the moment the process starts: imports the SDK,
        makes the client (`setup`) and sends one small complete stream through it (`warm_up`),
        so that the SDK's first-call costs are paid before the first case. Some SDKs take
        seconds to import on a loaded machine (LiteLLM ~6-9 s), while every protocol request
        has its own timeout (10 s by default): `main` waits for it a while before answering
        `start`, and the first stream waits for the rest."""
        import importlib

        for module in self.preload_modules:
            importlib.import_module(module)
        self.setup(slot)
        self.warm_up(slot)

    def warm_up(self, slot: "FeedSlot", dialect: str | None = None) -> None:
        """One small complete stream of `dialect` (default: the first declared) through `run`."""
        dialect = dialect or self.dialects[0]
        feed = Feed([WARM_UP[dialect]], "eof")
        slot.feed = feed
        try:
            got = self.run(slot, feed, [], dialect)
        finally:
            slot.feed = None
        if got.error is not None or got.text != "ok":
            print(f"warm-up stream gave {got.error or repr(got.text)}", file=sys.stderr)

    def version(self) -> str:
        from importlib.metadata import version

        return " ".join(f"{p}=={version(p)}" for p in self.sdk_package.split())

    def make_slot(self) -> "FeedSlot":
        """Where the mock transport takes each request's feed from (an agent layer that makes
        more requests than the stream's one answers them from its own slot)."""
        return FeedSlot()

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
    return root in ("httpx", "httpx2", "httpcore", "httpcore2") and any(
        c.__name__ == "TransportError" for c in type(x).__mro__)


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
# The protocol: the package's loop, at the bytes level
# --------------------------------------------------------------------------------------

def _call_outcome(call: Call, withheld: str | None) -> dict:
    call_id = call.call_id if isinstance(call.call_id, str) else ("" if call.call_id is None else str(call.call_id))
    name = call.name if isinstance(call.name, str) else ("" if call.name is None else str(call.name))
    if call.kind == "dispatch" and withheld is None:
        return toolcert_adapter.dispatchable(call_id, name, wire_value(call.value))
    raw = call.raw if call.raw is not None else (call.value if call.kind == "unparseable" else None)
    if not isinstance(raw, str):
        raw = "" if raw is None else toolcert_adapter.dumps(wire_value(raw))
    # A call the caller's check withholds is not run whatever its text: the check comes first.
    reason = withheld if withheld is not None else "unparseable"
    return toolcert_adapter.failed(reason, call_id, name, wire_value(raw))


def plain(value: Any) -> Any:
    """A request's value (the tools' schemas) with the package's exact numbers as Python
    numbers, so the SDK can serialize it to the provider."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() and "." not in str(value) \
            and "e" not in str(value).lower() else float(value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


class _Stream:
    """One stream, as the package's bytes-level accumulator: `feed` keeps the chunks,
    `finish` runs the SDK over them and reports what it handed over."""

    def __init__(self, adapter: SdkAdapter, slot: "FeedSlot", ready, tools: list, dialect: str):
        self.adapter, self.slot, self.ready, self.dialect = adapter, slot, ready, dialect
        self.tools = plain(tools)
        self.chunks: list[bytes] = []

    def feed(self, chunk: bytes, out) -> None:
        self.chunks.append(chunk)

    def finish(self, end: str, out) -> None:
        self.ready()
        feed = Feed(self.chunks, end)
        self.slot.feed = feed
        try:
            got = self.adapter.run(self.slot, feed, self.tools, self.dialect)
        finally:
            self.slot.feed = None
        if got.error is not None:
            # Stamped when the SDK raised: the chunks it had pulled, and whether it had read
            # past the last one.
            out.units, out.at_finish = feed.error_stamp()
            out.text(wire_value(got.text or ""))
            raise TurnError(got.error.cls, got.error.detail[:2000])
        withheld = None
        if self.adapter.policy == "documented" and got.stop != COMPLETE:
            withheld = CUT if got.stop == CUT else UNFINISHED
        for call in got.calls:
            out.outcome(_call_outcome(call, withheld))
        if got.layout is not None:
            out.layout(got.layout)
        out.text(wire_value(got.text or ""))


def main(adapter: SdkAdapter, argv: list[str] | None = None) -> int:
    """Serves toolcert's requests with `adapter`, at the bytes level, under the caller policy
    of the command line (`--policy`) or TOOLCERT_POLICY."""
    adapter.policy = policy_from(sys.argv[1:] if argv is None else argv)
    proto = _take_stdout()
    slot = adapter.make_slot()
    # Import the SDK, make the client and warm it up while the handshake goes on.
    failure: list[str] = []

    def prepare() -> None:
        try:
            adapter.prepare(slot)
        except BaseException:
            failure.append(traceback.format_exc()[-8000:])

    loader = threading.Thread(target=prepare, name="prepare", daemon=True)
    loader.start()
    # The wait is spread over the requests' timeouts: part before `start` is answered, part
    # before each `configure` is, the rest in the first stream's finish. (The interpreter's
    # own start counts against `start`'s timeout too: seconds on a loaded machine.)
    loader.join(timeout=4)

    def requests():
        for line in sys.stdin.buffer:
            if b'"configure"' in line:
                loader.join(timeout=7)
            yield line

    def ready() -> None:
        loader.join()
        if failure:
            raise RuntimeError(f"the SDK could not be set up: {failure[0]}")

    def factory(tools, config):
        return _Stream(adapter, slot, ready, tools, config.dialect)

    try:
        version = adapter.version()
    except Exception as e:  # a distribution missing from the venv: say so in the handshake
        version = f"unknown ({e})"
    return toolcert_adapter.serve(
        name=adapter.name,
        bytes=factory,
        version=version,
        homepage=adapter.homepage or None,
        dialects=adapter.dialects,
        quirks=adapter.quirks,
        extra={"policy": adapter.policy, "policy_doc": adapter.policy_doc},
        stdin=requests(),
        stdout=proto,
    )
