"""A correct accumulator built from the protocol's pieces, and the lifts between levels.

- `Core`: the provider-neutral accumulator (keyed by index with the call id kept, append
  only, protocol errors for an unannounced index, a second announcement and a fragment after
  stop, one strict parse per buffer at the end, nothing dispatched from a truncated or
  unfinished turn). It is the events-level factory of the example adapter.
- `wire_from_events(factory)`: an events-level accumulator fed at the wire level, through
  the reference dialect decoders; `bytes_from_wire(factory)`: a wire-level one fed at the
  bytes level, through the SSE decoder. An accumulator library that only takes neutral
  deltas can be certified at every level with them (what is certified below the events
  level is then these decoders, not your library).
"""

from __future__ import annotations

from .dialects import DECODERS
from .protocol import TRUNCATING, Config, Emit, TurnError, failed as _failed
from .sse import SseDecoder
from .strict_json import NotJson, loads, schema_errors

__all__ = ["Core", "wire_from_events", "bytes_from_wire", "reference_levels"]

class CallBuffer:
    __slots__ = ("index", "call_id", "name", "parts", "stopped")

    def __init__(self, index: int, call_id: str, name: str):
        self.index = index
        self.call_id = call_id
        self.name = name
        self.parts: list[str] = []
        self.stopped = False


class Core:
    """One stream's accumulator: buffers keyed by the positional index with the call id kept
    beside them, fragments appended as opaque text in arrival order (nothing parsed, decoded
    or trimmed), protocol errors for an unannounced index, a second announcement and a
    fragment after stop, one strict parse per buffer at the end of the stream."""

    def __init__(self, tools: list[dict], config: Config):
        self.schemas: dict[str, object] = {}
        if config.schema:
            for tool in tools:
                if tool.get("schema") is not None:
                    self.schemas.setdefault(tool["name"], tool["schema"])
        self.calls: list[CallBuffer] = []
        # By index, so that finding a call is not a scan (quadratic in the calls: the floor
        # `toolcert bench` prices against must not be); an index is announced once.
        self._by_index: dict[int, CallBuffer] = {}
        self.stop = None
        self.errored = False
        self.slots: list[dict] = []

    def _call(self, index: int):
        return self._by_index.get(index)

    def feed(self, e: dict, out: Emit) -> None:
        kind = e["type"]
        if kind == "text_delta":
            text = e["text"]
            out.text(text)
            # A text slot gathers its pieces in a list, joined in finish: `+=` on a string
            # held in a dict copies it every time (quadratic in the text's length;
            # `toolcert bench` caught it on the text series).
            if self.slots and self.slots[-1]["slot"] == "text":
                self.slots[-1]["text"].append(text)
            else:
                self.slots.append({"slot": "text", "text": [text]})
        elif kind == "call_start":
            index = e["index"]
            if self.stop is not None:
                raise TurnError("fragment_after_stop", f"call {index} announced after the stop")
            if self._call(index) is not None:
                raise TurnError(
                    "duplicate_announcement", f"index {index} announced twice (as {e['call_id']})"
                )
            self.slots.append({"slot": "call", "call_id": e["call_id"]})
            call = CallBuffer(index, e["call_id"], e["name"])
            self.calls.append(call)
            self._by_index[index] = call
        elif kind == "args_delta":
            index = e["index"]
            call = self._call(index)
            if call is None:
                raise TurnError("unannounced_index", f"fragment for unannounced index {index}")
            if call.stopped or self.stop is not None:
                raise TurnError("fragment_after_stop", f"fragment for index {index} after its stop")
            call.parts.append(e["fragment"])  # append only: no trim, no parse, no decode
        elif kind == "call_stop":
            index = e["index"]
            call = self._call(index)
            if call is None:
                raise TurnError("unannounced_index", f"stop for unannounced index {index}")
            if call.stopped:
                raise TurnError("fragment_after_stop", f"index {index} stopped twice")
            arguments = e.get("arguments")
            if arguments is not None and arguments != "".join(call.parts):
                raise TurnError(
                    "done_mismatch",
                    f"index {index}: the terminal's arguments differ from the fragments",
                )
            call.stopped = True
        elif kind == "stop":
            if self.stop is not None:
                raise TurnError("fragment_after_stop", "a second stop reason")
            self.stop = e["reason"]
        elif kind == "error":
            self.errored = True
        # error and ping: the stream ends (or goes on) and finish accounts for live calls;
        # foreign blocks (foreign_start, foreign_delta, foreign_stop) are never calls or text.

    def _judge(self, call: CallBuffer) -> dict:
        raw = "".join(call.parts)

        def failed(reason: str) -> dict:
            return _failed(reason, call.call_id, call.name, raw)

        if self.stop is None:
            # Without the stop reason the turn may yet have been cut: never dispatch.
            return failed("abandoned")
        if self.stop in TRUNCATING:
            return failed("truncated")
        if raw == "":
            args = {}  # a call with no argument bytes takes no arguments
        else:
            try:
                args = loads(raw)
            except NotJson:
                return failed("unparseable")
        schema = self.schemas.get(call.name)
        errors = schema_errors(schema, args) if schema is not None else []
        if errors:
            return {
                "outcome": "schema_error",
                "call_id": call.call_id,
                "name": call.name,
                "args": args,
                "errors": errors,
            }
        return {"outcome": "dispatchable", "call_id": call.call_id, "name": call.name, "args": args}

    def finish(self, end: str, out: Emit) -> None:
        for call in self.calls:
            out.outcome(self._judge(call))
        out.layout(
            [{"slot": "text", "text": "".join(s["text"])} if s["slot"] == "text" else s for s in self.slots]
        )
        # How the turn ended is what the stream said: no stop reason is made up for a
        # stream that simply stopped.
        if self.stop is not None:
            ending = "truncated" if self.stop in TRUNCATING else "complete"
        else:
            ending = "errored" if self.errored else "abandoned"
        out.ending(ending, self.stop)



class _Wire:
    """An events-level accumulator fed one dialect's SSE events."""

    __slots__ = ("decoder", "inner", "events")

    def __init__(self, inner, config: Config):
        self.decoder = DECODERS[config.dialect](config.quirks)
        self.inner = inner
        self.events: list[dict] = []

    def feed(self, unit: dict, out: Emit) -> None:
        events = self.events
        events.clear()
        self.decoder.decode(unit, events)
        for e in events:
            self.inner.feed(e, out)

    def finish(self, end: str, out: Emit) -> None:
        self.inner.finish(end, out)


class _Bytes:
    """A wire-level accumulator fed raw SSE bytes."""

    __slots__ = ("sse", "inner")

    def __init__(self, inner):
        self.sse = SseDecoder()
        self.inner = inner

    def feed(self, chunk: bytes, out: Emit) -> None:
        events: list[dict] = []
        try:
            self.sse.feed(chunk, events)
        finally:
            # Events completed before a bad byte are still the stream's.
            for ev in events:
                self.inner.feed(ev, out)

    def finish(self, end: str, out: Emit) -> None:
        try:
            self.sse.finish()
        except TurnError:
            # A character cut by a dropped connection is the drop's doing.
            if end == "eof":
                raise
        self.inner.finish(end, out)


def wire_from_events(factory):
    """The wire-level factory that decodes the configured dialect with the reference
    decoders and feeds the neutral events to an accumulator from `factory`."""
    return lambda tools, config: _Wire(factory(tools, config), config)


def bytes_from_wire(factory):
    """The bytes-level factory that decodes SSE and feeds the events to an accumulator from
    the wire-level `factory`."""
    return lambda tools, config: _Bytes(factory(tools, config))


def reference_levels(factory=Core) -> dict:
    """`serve` keyword arguments feeding an events-level factory at every level:
    `serve(name=..., **reference_levels(MyAccumulator))`."""
    wire = wire_from_events(factory)
    return {"events": factory, "wire": wire, "bytes": bytes_from_wire(wire)}
