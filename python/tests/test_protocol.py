"""The protocol loop: handshake, configure, seq echo, stamps, skipped and errored replies."""
import base64
import io
import json

import pytest

from toolcert_adapter import Skip, TurnError, dispatchable, serve


class Echo:
    """Dispatches one call whose arguments are everything fed, joined (bytes decoded)."""

    def __init__(self, tools, config):
        self.parts = []
        if tools and tools[0]["name"] == "skip":
            raise Skip("no such tool here")

    def feed(self, unit, out):
        if unit == b"boom" or unit == {"type": "boom"}:
            raise TurnError("malformed", "boom")
        if unit == {"type": "too_many"}:
            raise TurnError("limit", "past the cap")
        self.parts.append(unit.decode() if isinstance(unit, bytes) else unit["type"])

    def finish(self, end, out):
        out.outcome(dispatchable("c", "f", {"fed": "".join(self.parts), "end": end}))


def converse(*requests, **options):
    stdin = io.BytesIO(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
    stdout = io.BytesIO()
    assert serve(name="echo", events=Echo, bytes=Echo, dialects=["anthropic"], stdin=stdin, stdout=stdout, **options) == 0
    return [json.loads(line) for line in stdout.getvalue().splitlines()]


def run(seq, units, tools=(), end="eof"):
    order = [[0, k] for k in range(len(units) + 1)]
    return {"cmd": "run", "seq": seq, "case": {"streams": [{"tools": list(tools), "units": units, "end": end}], "order": order}}


def test_handshake_declares_the_levels_given():
    start, = converse({"cmd": "start", "version": 1})
    assert start["version"] == 1
    assert start["implementation"]["levels"] == ["events", "bytes"]
    assert start["implementation"]["capabilities"] == []


def test_caps_are_declared_only_when_given_and_limit_is_a_turn_error():
    start, = converse({"cmd": "start", "version": 1})
    assert "caps" not in start["implementation"]
    caps = {"calls": 128, "argument_bytes": 16777216, "fragments": 65536, "depth": 128}
    start, _, reply = converse(
        {"cmd": "start", "version": 1},
        {"cmd": "configure", "level": "events"},
        run(1, [{"type": "too_many"}]),
        caps=caps,
    )
    assert start["implementation"]["caps"] == caps
    assert reply["results"][0]["error"] == {"class": "limit", "detail": "past the cap", "units": 1, "at_finish": False}
    for bad in ({"tools": 1}, {"calls": -1}, {"depth": 1.5}, {"calls": True}, [("calls", 1)]):
        with pytest.raises(ValueError):
            serve(name="echo", events=Echo, caps=bad, stdin=io.BytesIO(), stdout=io.BytesIO())


def test_configure_refuses_an_undeclared_level_or_dialect():
    replies = converse(
        {"cmd": "configure", "level": "wire", "dialect": "anthropic"},
        {"cmd": "configure", "level": "bytes", "dialect": "openai-chat"},
        {"cmd": "configure", "level": "bytes", "dialect": "anthropic"},
    )
    assert [r["ok"] for r in replies] == [False, False, True]


def test_bytes_payloads_text_and_base64_and_stamps():
    units = [{"text": "ab"}, {"bytes": base64.b64encode("é".encode()).decode()}]
    _, reply = converse({"cmd": "configure", "level": "bytes", "dialect": "anthropic"}, run(7, units, end="cancel"))
    assert reply["seq"] == 7
    outcome, = reply["results"][0]["outcomes"]
    assert outcome["args"] == {"fed": "abé", "end": "cancel"}
    assert (outcome["units"], outcome["at_finish"]) == (2, True)
    # The adapter's own time for the run, for `toolcert bench`.
    assert isinstance(reply["elapsed_ns"], int) and reply["elapsed_ns"] > 0


def test_a_turn_error_ends_the_stream_with_its_stamp():
    _, reply = converse({"cmd": "configure", "level": "events"}, run(1, [{"type": "ping"}, {"type": "boom"}]))
    result = reply["results"][0]
    assert result["error"] == {"class": "malformed", "detail": "boom", "units": 2, "at_finish": False}
    assert result["outcomes"] == []


def test_skip_and_errored_replies():
    replies = converse(
        {"cmd": "configure", "level": "events"},
        run(2, [], tools=[{"name": "skip"}]),
        {"cmd": "run", "seq": 3, "case": {}},
        {"cmd": "stop"},
        {"cmd": "start", "version": 1},
    )
    assert replies[1] == {"seq": 2, "skipped": True, "reason": "no such tool here"}
    assert replies[2]["seq"] == 3 and replies[2]["errored"] is True
    assert len(replies) == 3, "nothing is answered after stop"
