"""The subprocess protocol loop (docs/PROTOCOL.md, version 1), the adapter's side.

toolcert starts the adapter, sends one JSON request per line on stdin (`start`,
`configure`, `run`, `stop`) and reads one reply per line on stdout. `serve` answers them:
it declares the implementation, keeps the configured setting, feeds each stream of a case
to a fresh accumulator from the factory of the configured level, in the order the case
gives, stamps every outcome and error with the units delivered so far, and writes the
results. The accumulator is yours; this loop is the same for every adapter.

An accumulator is any object with `feed(unit, out)` and `finish(end, out)`, made by a
factory `factory(tools, config)` once per stream:

- events level: `unit` is a neutral event dict (`{"type": "args_delta", "index": 1,
  "fragment": "..."}`);
- wire level: `unit` is an SSE event dict `{"event", "data", "id"}` of `config.dialect`;
- bytes level: `unit` is the transport chunk's `bytes` (the loop decodes the protocol's
  text and base64 payloads).

It reports through `out` (an `Emit`), raises `TurnError` to fail the turn, raises `Skip`
to skip the case; any other exception is recorded as that stream's crash.
"""

from __future__ import annotations

import base64
import json
import platform
import sys
import time
import traceback
import tracemalloc
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol

from .pollution import PollutionWatch, default_watch
from .strict_json import JsonNumber, dumps

__all__ = [
    "PROTOCOL_VERSION",
    "LEVELS",
    "DIALECTS",
    "ERROR_CLASSES",
    "CAPS",
    "TRUNCATING",
    "ENDINGS",
    "Config",
    "Emit",
    "TurnError",
    "Skip",
    "Accumulator",
    "dispatchable",
    "schema_error",
    "failed",
    "malformed",
    "serve",
    "run_case",
]

PROTOCOL_VERSION = 1
LEVELS = ("events", "wire", "bytes")
DIALECTS = ("anthropic", "openai-chat", "openai-responses", "gemini")
# Dialects an adapter may declare at the bytes level only: binary framing (AWS event
# stream), which this package has no reference decoder for; never declared by default.
BYTES_ONLY_DIALECTS = ("bedrock",)
# Every wire behaviour of the server profiles (docs/SPEC.md, "Server profiles"): what
# `serve(quirks=...)` may declare. toolcert runs a profile only when the adapter declares all
# its behaviours; an adapter that hands the bytes to an SDK declares them all (an SDK reads
# whatever comes), one with its own decoder declares those it reads.
QUIRKS = (
    "chat_index_zero",
    "chat_repeat_fields",
    "chat_repeat_id",
    "chat_empty_continuations",
    "chat_no_index",
    "chat_whole_calls",
    "chat_sparse_index",
    "chat_split_entries",
    "chat_repeat_on_finish",
    "chat_content_filters",
    "chat_late_name",
    "responses_done_only",
    "responses_rotating_item_id",
    "responses_hosted_items",
    "anthropic_input_in_start",
    "anthropic_content_in_start",
    "gemini_partial_args",
    "hostile",
)
# The protocol's turn error classes: compared by class, never by message.
ERROR_CLASSES = frozenset(
    {
        "unannounced_index",
        "duplicate_announcement",
        "fragment_after_stop",
        "done_mismatch",
        "malformed",
        "upstream",
        "truncated",
        "incomplete",
        "limit",
        "other",
    }
)
# The caps `serve(caps=...)` may declare (docs/PROTOCOL.md, "Caps."): a stream past one may
# be refused with a turn error of class `limit`.
CAPS = ("calls", "argument_bytes", "fragments", "depth")
# Stop reasons that say the output was cut: nothing of such a turn may be dispatched.
TRUNCATING = frozenset({"max_tokens", "refusal", "length", "content_filter", "incomplete"})
# How a turn can end, as an accumulator says it (`Emit.ending`).
ENDINGS = ("complete", "truncated", "abandoned", "errored")


class TurnError(Exception):
    """Fails the whole turn (the stream ends here). `cls` is one of `ERROR_CLASSES`."""

    def __init__(self, cls: str, detail: str):
        if cls not in ERROR_CLASSES:
            raise ValueError(f"{cls!r} is not a turn error class (one of {sorted(ERROR_CLASSES)})")
        super().__init__(f"{cls}: {detail}")
        self.cls = cls
        self.detail = detail


def malformed(detail: str) -> TurnError:
    """The stream could not be read (bad SSE, bad UTF-8, a dialect event missing a field)."""
    return TurnError("malformed", detail)


class Skip(Exception):
    """Raised from a factory, `feed` or `finish`: this adapter cannot run the case (the
    reply is `skipped`, recorded against the subject without a restart)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class Config:
    """The setting of the last `configure`."""

    level: str = "events"
    dialect: str = "anthropic"
    quirks: dict = field(default_factory=dict)
    # Validate arguments against the tool's schema (only with the `schema` capability).
    schema: bool = False


class Emit:
    """Where an accumulator reports. Everything is stamped with the number of the stream's
    units delivered when it was emitted (counting the unit being handled) and whether it
    came from `finish`."""

    __slots__ = ("units", "at_finish", "outcomes", "text_pieces", "slots", "ending_said")

    def __init__(self):
        self.units = 0
        self.at_finish = False
        self.outcomes: list[dict] = []
        self.text_pieces: list[str] = []
        self.slots: list[dict] | None = None
        self.ending_said: dict | None = None

    def outcome(self, outcome: dict) -> None:
        """One call's outcome: `dispatchable(...)`, `schema_error(...)` or `failed(...)`."""
        outcome = dict(outcome)
        outcome["units"] = self.units
        outcome["at_finish"] = self.at_finish
        self.outcomes.append(outcome)

    def text(self, text: str) -> None:
        """A piece of prose, as it arrives."""
        self.text_pieces.append(text)

    def layout(self, slots: list[dict]) -> None:
        """Optional: the assembled message's slots in order, `{"slot": "text", "text"}` and
        `{"slot": "call", "call_id"}`, so block order can be checked."""
        self.slots = slots

    def ending(self, ending: str, stop_reason: str | None = None) -> None:
        """Optional: how the turn ended, as your library tells its caller: `ending` one of
        `ENDINGS`, `stop_reason` the stop reason as the provider spelled it, only when the
        stream carried one (never made up for a stream that simply stopped). Judged by
        ACC-ENDING; not calling it leaves that rule n/a."""
        if ending not in ENDINGS:
            raise ValueError(f"{ending!r} is not an ending (one of {', '.join(ENDINGS)})")
        self.ending_said = {
            "ending": ending,
            "stop_reason": stop_reason,
            "units": self.units,
            "at_finish": self.at_finish,
        }


class Accumulator(Protocol):
    def feed(self, unit: Any, out: Emit) -> None: ...

    def finish(self, end: str, out: Emit) -> None: ...


Factory = Callable[[list, Config], Accumulator]


def dispatchable(call_id: str, name: str, args: Any) -> dict:
    """The call finished in a complete turn and its arguments parsed (and meet its schema)."""
    return {"outcome": "dispatchable", "call_id": call_id, "name": name, "args": args}


def schema_error(call_id: str, name: str, args: Any, errors: Iterable[str]) -> dict:
    """The arguments parsed but violate the tool's schema (schema profile only)."""
    return {
        "outcome": "schema_error",
        "call_id": call_id,
        "name": name,
        "args": args,
        "errors": list(errors),
    }


def failed(reason: str, call_id: str, name: str, raw: str) -> dict:
    """Nothing to run: `reason` is `abandoned`, `truncated` or `unparseable`; `raw` is the
    buffer as received."""
    if reason not in ("abandoned", "truncated", "unparseable"):
        raise ValueError(f"{reason!r} is not a failure reason (abandoned, truncated, unparseable)")
    return {"outcome": "failed", "reason": reason, "call_id": call_id, "name": name, "raw": raw}


def _bytes_of(payload: dict) -> bytes:
    # A chunk is {"text"} when its bytes are UTF-8, otherwise {"bytes": base64}.
    text = payload.get("text")
    if text is not None:
        return text.encode("utf-8")
    return base64.b64decode(payload["bytes"], validate=True)


def run_case(
    case: dict, config: Config, factories: dict[str, Factory], watch: PollutionWatch | None = None
) -> list[dict]:
    """Feeds every stream to its own fresh accumulator, step by step in the case's order:
    `[s, k]` delivers unit k of stream s; `[s, len(units)]` ends stream s. A turn error
    ends a stream (nothing more is fed, finish is not called). Raises `Skip`.

    When a stream's turn is over (after its finish, its turn error or its crash) the modules
    and classes are checked (`watch`; by default one snapshotted at the first run) and what
    changed since the last check is that stream's `pollution`."""
    if watch is None:
        watch = default_watch()
    level = config.level
    make = factories[level]
    streams = case["streams"]
    # What the streams carry, as sent: only a name in it can be a pollution (PollutionWatch.check).
    case_text = json.dumps(case, ensure_ascii=False)
    accs: list = []
    emits: list[Emit] = []
    results: list[dict] = []
    for stream in streams:
        emits.append(Emit())
        result: dict = {}
        results.append(result)
        try:
            accs.append(make(stream.get("tools") or [], config))
        except Skip:
            raise
        except Exception:
            result["crash"] = traceback.format_exc(limit=8)
            result["pollution"] = watch.check(case_text)
            accs.append(None)
    for s, k in case["order"]:
        acc = accs[s]
        if acc is None:
            continue
        out = emits[s]
        units = streams[s]["units"]
        try:
            if k < len(units):
                out.units += 1
                unit = units[k]
                acc.feed(_bytes_of(unit) if level == "bytes" else unit, out)
            else:
                out.at_finish = True
                accs[s] = None
                acc.finish(streams[s].get("end", "eof"), out)
                results[s]["pollution"] = watch.check(case_text)
        except TurnError as e:
            accs[s] = None
            results[s]["error"] = {
                "class": e.cls,
                "detail": e.detail,
                "units": out.units,
                "at_finish": out.at_finish,
            }
            results[s]["pollution"] = watch.check(case_text)
        except Skip:
            raise
        except Exception:
            accs[s] = None
            results[s]["crash"] = traceback.format_exc(limit=8)
            results[s]["pollution"] = watch.check(case_text)
    for result, out in zip(results, emits):
        if "pollution" not in result:  # a stream the order never ended (a malformed case)
            result["pollution"] = watch.check(case_text)
        result["outcomes"] = out.outcomes
        result["text"] = "".join(out.text_pieces)
        if out.slots is not None:
            result["layout"] = out.slots
        if out.ending_said is not None:
            result["ending"] = out.ending_said
    return results


def serve(
    *,
    name: str,
    events: Factory | None = None,
    wire: Factory | None = None,
    bytes: Factory | None = None,  # noqa: A002 (the level's name)
    version: str | None = None,
    homepage: str | None = None,
    language: str = "python",
    dialects: Iterable[str] = DIALECTS,
    quirks: Iterable[str] = (),
    schema: bool = False,
    caps: dict | None = None,
    extra: dict | None = None,
    watch: dict | PollutionWatch | None = None,
    stdin=None,
    stdout=None,
) -> int:
    """Answers toolcert's requests until `stop` or the end of stdin; returns the exit status.

    Give a factory for each level your library can be fed at (at least one); `dialects`
    are those your wire and bytes levels speak, `quirks` the server profiles' wire behaviours
    they read (names from `QUIRKS`; `QUIRKS` itself for an SDK that reads whatever comes),
    `schema=True` only if your accumulator
    validates arguments against the tool's schema. `caps`: the limits your SDK documents,
    `{name: count}` with names from `CAPS` (a stream past one may fail with `TurnError("limit",
    ...)`). `extra`: more free fields of the
    handshake's `implementation` object (e.g. `{"policy": "documented"}`, docs/PROTOCOL.md).
    `watch`: more objects for the pollution check to compare in full after every stream,
    `{name: object}` (an SDK's classes or modules), or a `PollutionWatch` to use as it is."""
    factories = {k: f for k, f in (("events", events), ("wire", wire), ("bytes", bytes)) if f}
    if not factories:
        raise ValueError("serve() needs a factory for at least one level (events, wire or bytes)")
    quirks = list(quirks)
    for q in quirks:
        if q not in QUIRKS:
            raise ValueError(f"unknown quirk {q!r} (one of {', '.join(QUIRKS)})")
    dialects = list(dialects)
    for d in dialects:
        if d not in DIALECTS and d not in BYTES_ONLY_DIALECTS:
            known = ", ".join(DIALECTS + BYTES_ONLY_DIALECTS)
            raise ValueError(f"unknown dialect {d!r} (one of {known})")
    if caps is not None and not isinstance(caps, dict):
        raise ValueError(f"caps must be a dict {{name: count}}, not {caps!r}")
    caps = dict(caps or {})
    for c, n in caps.items():
        if c not in CAPS:
            raise ValueError(f"unknown cap {c!r} (one of {', '.join(CAPS)})")
        # bool is an int in Python, but not in JSON.
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"cap {c!r} must be a non-negative integer, not {n!r}")
    implementation = {
        "name": name,
        "language": language,
        "language_version": platform.python_version(),
        "levels": list(factories),
        "dialects": dialects,
        "quirks": list(quirks),
        "capabilities": ["schema"] if schema else [],
    }
    if caps:
        implementation["caps"] = caps
    if extra:
        implementation.update({k: v for k, v in extra.items() if k not in implementation})
    if version is not None:
        implementation["version"] = version
    if homepage is not None:
        implementation["homepage"] = homepage
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout.buffer
    memory = False
    config = Config(schema=schema)
    # The pollution check's baseline: the runtime as the adapter left it, SDK imported, before
    # the first request.
    if not isinstance(watch, PollutionWatch):
        watch = PollutionWatch(watch)

    def send(message: dict) -> None:
        stdout.write(dumps(message).encode("utf-8") + b"\n")
        stdout.flush()

    for line in stdin:
        if not line.strip():
            continue
        # Floats only occur in tool schemas (bounds, enums): read them exactly, as the
        # arguments they are compared with are.
        request = json.loads(line, parse_float=JsonNumber)
        cmd = request.get("cmd")
        if cmd == "start":
            if request.get("version") != PROTOCOL_VERSION:
                print(
                    f"toolcert speaks protocol {request.get('version')}, "
                    f"this adapter {PROTOCOL_VERSION}",
                    file=sys.stderr,
                )
            send({"version": PROTOCOL_VERSION, "implementation": implementation})
        elif cmd == "configure":
            level = request.get("level")
            dialect = request.get("dialect")
            if level not in factories:
                send({"ok": False, "reason": f"level {level!r} is not supported"})
                continue
            if level != "events" and dialect not in dialects:
                send({"ok": False, "reason": f"dialect {dialect!r} is not supported"})
                continue
            profile = request.get("profile") or {}
            # Peak heap per run, asked for by `toolcert bench --bounded` only: tracemalloc
            # slows every allocation down, so it is on only then.
            memory = bool(profile.get("memory", False))
            if memory and not tracemalloc.is_tracing():
                tracemalloc.start()
            config = Config(
                level=level,
                dialect=dialect,
                quirks=request.get("quirks") or {},
                schema=schema and bool(profile.get("schema", True)),
            )
            send({"ok": True})
        elif cmd == "run":
            seq = request.get("seq")
            try:
                # elapsed_ns: the accumulation alone (toolcert bench prices it), not
                # decoding the request or writing the reply.
                # The process's CPU time, not the wall clock: on a shared machine a run
                # preempted by other work would otherwise be priced by that work.
                # The pollution check is the package's work, not the subject's: left out.
                checking = watch.cpu_ns
                if memory:
                    tracemalloc.reset_peak()
                    held = tracemalloc.get_traced_memory()[0]
                started = time.process_time_ns()
                results = run_case(request["case"], config, factories, watch)
                elapsed = max(1, time.process_time_ns() - started - (watch.cpu_ns - checking))
                reply = {"seq": seq, "results": results, "elapsed_ns": elapsed}
                if memory:
                    # The most the run held at once over what was held before it (the
                    # results it returns included: a subject's output is its own).
                    reply["peak_bytes"] = max(0, tracemalloc.get_traced_memory()[1] - held)
                send(reply)
            except Skip as e:
                send({"seq": seq, "skipped": True, "reason": e.reason})
            except Exception as e:
                send(
                    {
                        "seq": seq,
                        "errored": True,
                        "context": {"message": str(e), "traceback": traceback.format_exc()},
                    }
                )
        elif cmd == "stop":
            return 0
        else:
            print(f"unknown command {cmd!r}", file=sys.stderr)
            send(
                {
                    "seq": request.get("seq"),
                    "errored": True,
                    "context": {"message": f"unknown command {cmd!r}"},
                }
            )
    return 0
