#!/usr/bin/env python3
"""A toolcert adapter template: a correct streaming tool-call accumulator, in Python.

Run it as a toolcert subject:

    toolcert certify --subject 'exec:python3 examples/adapters/python/adapter.py'

It speaks toolcert's subprocess protocol (docs/PROTOCOL.md, version 1): one JSON message
per line on stdin, one reply per line on stdout, nothing else on stdout (log to stderr).
It needs Python 3.11 and nothing outside the standard library.

The file has five parts, top to bottom:

1. strict JSON: a parse exactly as strict as serde_json's (RFC 8259, nothing more), and a
   small JSON Schema validator for the schema profile;
2. the core: the provider-neutral accumulator (the part your library replaces);
3. the dialect decoders: Anthropic Messages, OpenAI Chat Completions, OpenAI Responses;
4. the SSE decoder: raw bytes in transport chunks, with incremental UTF-8;
5. the protocol: reads requests, feeds each stream in the order the harness says, answers.

To certify your own library, replace the accumulators `make_events`, `make_wire` and
`make_bytes` hand out (see README.md beside this file); keep part 5 as it is.
"""

from __future__ import annotations

import base64
import codecs
import json
import math
import platform
import re
import sys
import traceback

PROTOCOL_VERSION = 1

IMPLEMENTATION = {
    "name": "toolcert-adapter-python",
    "language": "python",
    "version": "0.1.0",
    "homepage": "https://example.invalid/toolcert/examples/adapters/python",
    "language_version": platform.python_version(),
    "levels": ["events", "wire", "bytes"],
    "dialects": ["anthropic", "openai-chat", "openai-responses"],
    "quirks": ["chat_index_zero"],
    "capabilities": ["schema"],
}


class TurnError(Exception):
    """Fails the whole turn. `cls` is one of the protocol's error classes."""

    def __init__(self, cls: str, detail: str):
        super().__init__(f"{cls}: {detail}")
        self.cls = cls
        self.detail = detail


def malformed(detail: str) -> TurnError:
    return TurnError("malformed", detail)


# --------------------------------------------------------------------------------------
# 1. Strict JSON and schemas
# --------------------------------------------------------------------------------------

class NotJson(ValueError):
    pass


def _refuse_constant(name: str):
    # json.loads accepts NaN, Infinity and -Infinity; RFC 8259 does not.
    raise NotJson(f"{name} is not JSON")


def _int(text: str):
    # serde_json reads -0 as the float -0.0, integers beyond 64 bits as floats, and refuses
    # what overflows a float. (int() of a very long string would also trip Python's
    # int-digits limit, so long ones go straight to float.)
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
# A lone surrogate can only come from an escape: \uD800 to \uDFFF.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
# serde_json refuses documents nested this deep (its recursion limit).
MAX_DEPTH = 128


def _needs_check(text: str) -> bool:
    """Whether the parsed value of `text` may hold a lone surrogate or nest too deeply."""
    return (
        text.count("[") + text.count("{") >= MAX_DEPTH - 1
        or _SURROGATE_ESCAPE.search(text) is not None
    )


def _check_tree(value) -> None:
    """Refuses what json.loads lets through but RFC 8259 text cannot mean: lone surrogates
    (from `\\ud800` escapes) and nesting deeper than serde_json reads."""
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
    NotJson (or ValueError) otherwise. Numbers come back as serde_json reads them."""
    try:
        value = json.loads(
            text, parse_constant=_refuse_constant, parse_int=_int, parse_float=_float
        )
    except RecursionError as e:
        raise NotJson("nested too deeply") from e
    if _needs_check(text):
        _check_tree(value)
    return value


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def json_equal(a, b) -> bool:
    """JSON equality: numbers by value, booleans never equal to numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _type_ok(t: str, v) -> bool:
    if t == "string":
        return isinstance(v, str)
    if t == "integer":
        return (isinstance(v, int) and not isinstance(v, bool)) or (
            isinstance(v, float) and v.is_integer()
        )
    if t == "number":
        return _is_number(v)
    if t == "boolean":
        return isinstance(v, bool)
    if t == "null":
        return v is None
    if t == "object":
        return isinstance(v, dict)
    if t == "array":
        return isinstance(v, list)
    return True


def schema_errors(schema, value, path: str = "") -> list[str]:
    """Validates `value` against a JSON Schema, for the keywords tool schemas use: type,
    enum, const, properties, required, additionalProperties, items, min/maxLength,
    min/maxItems, minimum, maximum, exclusiveMinimum, exclusiveMaximum, anyOf, allOf, not.
    Other keywords are ignored. Use the `jsonschema` package for full coverage."""
    if schema is True or not isinstance(schema, dict):
        return []
    if schema is False:
        return [f"{path or '/'}: no value is allowed"]
    errors: list[str] = []
    where = path or "/"
    t = schema.get("type")
    if isinstance(t, str) and not _type_ok(t, value):
        errors.append(f"{where}: not of type {t}")
    elif isinstance(t, list) and not any(_type_ok(x, value) for x in t if isinstance(x, str)):
        errors.append(f"{where}: not of any type {t}")
    if isinstance(schema.get("enum"), list) and not any(
        json_equal(value, x) for x in schema["enum"]
    ):
        errors.append(f"{where}: not one of the enum values")
    if "const" in schema and not json_equal(value, schema["const"]):
        errors.append(f"{where}: not the constant")
    if isinstance(value, dict):
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        for key in schema.get("required") or []:
            if isinstance(key, str) and key not in value:
                errors.append(f"{where}: required property {key!r} is missing")
        extra = schema.get("additionalProperties", True)
        for key, v in value.items():
            if key in props:
                errors.extend(schema_errors(props[key], v, f"{path}/{key}"))
            elif extra is False:
                errors.append(f"{where}: additional property {key!r}")
            elif isinstance(extra, dict):
                errors.extend(schema_errors(extra, v, f"{path}/{key}"))
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, (dict, bool)):
            for i, v in enumerate(value):
                errors.extend(schema_errors(items, v, f"{path}/{i}"))
        if isinstance(schema.get("minItems"), int) and len(value) < schema["minItems"]:
            errors.append(f"{where}: fewer than {schema['minItems']} items")
        if isinstance(schema.get("maxItems"), int) and len(value) > schema["maxItems"]:
            errors.append(f"{where}: more than {schema['maxItems']} items")
    if isinstance(value, str):
        if isinstance(schema.get("minLength"), int) and len(value) < schema["minLength"]:
            errors.append(f"{where}: shorter than {schema['minLength']}")
        if isinstance(schema.get("maxLength"), int) and len(value) > schema["maxLength"]:
            errors.append(f"{where}: longer than {schema['maxLength']}")
    if _is_number(value):
        for key, bad in (
            ("minimum", lambda v, b: v < b),
            ("maximum", lambda v, b: v > b),
            ("exclusiveMinimum", lambda v, b: v <= b),
            ("exclusiveMaximum", lambda v, b: v >= b),
        ):
            bound = schema.get(key)
            if _is_number(bound) and bad(value, bound):
                errors.append(f"{where}: {key} {bound}")
    if isinstance(schema.get("allOf"), list):
        for sub in schema["allOf"]:
            errors.extend(schema_errors(sub, value, path))
    if isinstance(schema.get("anyOf"), list) and not any(
        not schema_errors(sub, value, path) for sub in schema["anyOf"]
    ):
        errors.append(f"{where}: matches none of anyOf")
    if "not" in schema and not schema_errors(schema["not"], value, path):
        errors.append(f"{where}: matches the `not` schema")
    return errors


# --------------------------------------------------------------------------------------
# 2. The core: provider-neutral events in, outcomes out
# --------------------------------------------------------------------------------------

# Stop reasons that say the output was cut: nothing of such a turn may be dispatched.
TRUNCATING = frozenset({"max_tokens", "refusal", "length", "content_filter", "incomplete"})


class Emit:
    """Where an accumulator reports. The protocol loop stamps everything with the number of
    units delivered to the stream so far, and whether it came from `finish`."""

    __slots__ = ("units", "at_finish", "outcomes", "text_pieces", "slots")

    def __init__(self):
        self.units = 0
        self.at_finish = False
        self.outcomes: list[dict] = []
        self.text_pieces: list[str] = []
        self.slots = None

    def outcome(self, outcome: dict) -> None:
        outcome["units"] = self.units
        outcome["at_finish"] = self.at_finish
        self.outcomes.append(outcome)

    def text(self, text: str) -> None:
        self.text_pieces.append(text)

    def layout(self, slots: list[dict]) -> None:
        self.slots = slots


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

    def __init__(self, tools: list[dict], validate: bool):
        self.schemas: dict[str, object] = {}
        if validate:
            for tool in tools:
                if tool.get("schema") is not None:
                    self.schemas.setdefault(tool["name"], tool["schema"])
        self.calls: list[CallBuffer] = []
        self.stop = None
        self.slots: list[dict] = []

    def _call(self, index: int):
        for call in reversed(self.calls):
            if call.index == index:
                return call
        return None

    def on_event(self, e: dict, out: Emit) -> None:
        kind = e["type"]
        if kind == "text_delta":
            text = e["text"]
            out.text(text)
            if self.slots and self.slots[-1]["slot"] == "text":
                self.slots[-1]["text"] += text
            else:
                self.slots.append({"slot": "text", "text": text})
        elif kind == "call_start":
            index = e["index"]
            if self.stop is not None:
                raise TurnError("fragment_after_stop", f"call {index} announced after the stop")
            if self._call(index) is not None:
                raise TurnError(
                    "duplicate_announcement", f"index {index} announced twice (as {e['call_id']})"
                )
            self.slots.append({"slot": "call", "call_id": e["call_id"]})
            self.calls.append(CallBuffer(index, e["call_id"], e["name"]))
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
        # error and ping: the stream ends (or goes on) and finish accounts for live calls.

    def _judge(self, call: CallBuffer) -> dict:
        raw = "".join(call.parts)

        def failed(reason: str) -> dict:
            return {
                "outcome": "failed",
                "reason": reason,
                "call_id": call.call_id,
                "name": call.name,
                "raw": raw,
            }

        if self.stop is None:
            # Without the stop reason the turn may yet have been cut: never dispatch.
            return failed("abandoned")
        if self.stop in TRUNCATING:
            return failed("truncated")
        if raw == "":
            args = {}  # a call with no argument bytes takes no arguments
        else:
            try:
                args = strict_loads(raw)
            except ValueError:
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
        out.layout(self.slots)


# --------------------------------------------------------------------------------------
# 3. Dialect decoders: one dialect's SSE events -> neutral events (no accumulating here)
# --------------------------------------------------------------------------------------

def _payload(event: str, data: str) -> dict:
    try:
        value = json.loads(data, parse_constant=_refuse_constant)
        if _needs_check(data):
            _check_tree(value)
    except (ValueError, RecursionError) as e:
        raise malformed(f"{event}: data is not JSON: {e}") from None
    if not isinstance(value, dict):
        raise malformed(f"{event}: data is not a JSON object")
    return value


def _str(o: dict, key: str, where: str, required: bool = False):
    v = o.get(key)
    if v is None:
        if required:
            raise malformed(f"{where}: missing field `{key}`")
        return None
    if not isinstance(v, str):
        raise malformed(f"{where}: {key}: expected a string")
    return v


def _u32(o: dict, key: str, where: str, required: bool = True):
    v = o.get(key)
    if v is None and not required:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 0xFFFFFFFF:
        raise malformed(f"{where}: {key}: expected an unsigned 32-bit integer")
    return v


def _obj(o: dict, key: str, where: str, required: bool = True):
    v = o.get(key)
    if v is None and not required:
        return None
    if not isinstance(v, dict):
        raise malformed(f"{where}: {key}: expected an object")
    return v


def _event_name(ev: dict, data: dict | None) -> str:
    name = ev.get("event")
    if name:
        return name
    return _str(data if data is not None else {}, "type", "event without a name", True)


def _check_type(name: str, data: dict) -> None:
    kind = _str(data, "type", name)
    if kind is not None and kind != name:
        raise malformed(f"{name}: type: the data says `{kind}` under event `{name}`")


ANTHROPIC_STOPS = frozenset({"tool_use", "end_turn", "stop_sequence", "max_tokens", "refusal"})


class AnthropicDecoder:
    def __init__(self, quirks: dict):
        self.kinds: dict[int, str] = {}  # the kind of block each index last started

    def decode(self, ev: dict, out: list) -> None:
        data_text = ev["data"]
        if ev.get("event"):
            name = ev["event"]
            data = None
        else:
            data = _payload("event without a name", data_text)
            name = _event_name(ev, data)
        known = name in (
            "content_block_start", "content_block_delta", "content_block_stop", "message_delta",
            "error", "ping", "message_start", "message_stop",
        )
        if not known:
            return  # event types added after this adapter was written
        if data is None:
            data = _payload(name, data_text)
        _check_type(name, data)
        if name == "content_block_start":
            index = _u32(data, "index", name)
            block = _obj(data, "content_block", name)
            kind = _str(block, "type", f"{name}: content_block", True)
            if kind == "tool_use":
                call_id = _str(block, "id", f"{name}: content_block")
                call_name = _str(block, "name", f"{name}: content_block")
                if call_id is None or call_name is None:
                    raise malformed(f"{name}: content_block: a tool_use block needs `id` and `name`")
                out.append({"type": "call_start", "index": index, "call_id": call_id, "name": call_name})
                self.kinds[index] = "tool_use"
            elif kind == "text":
                text = _str(block, "text", f"{name}: content_block")
                if text:
                    out.append({"type": "text_delta", "text": text})
                self.kinds[index] = "text"
            else:
                self.kinds[index] = "other"
        elif name == "content_block_delta":
            index = _u32(data, "index", name)
            delta = _obj(data, "delta", name)
            kind = _str(delta, "type", f"{name}: delta", True)
            if kind == "text_delta":
                out.append({"type": "text_delta", "text": _str(delta, "text", f"{name}: delta", True)})
            elif kind == "input_json_delta" and self.kinds.get(index) != "other":
                # (a server tool's input is no client call: it is skipped)
                fragment = _str(delta, "partial_json", f"{name}: delta", True)
                out.append({"type": "args_delta", "index": index, "fragment": fragment})
        elif name == "content_block_stop":
            index = _u32(data, "index", name)
            if self.kinds.get(index) in (None, "tool_use"):
                out.append({"type": "call_stop", "index": index})
        elif name == "message_delta":
            delta = _obj(data, "delta", name)
            reason = _str(delta, "stop_reason", f"{name}: delta")
            if reason is not None:
                if reason not in ANTHROPIC_STOPS:
                    raise malformed(f"{name}: delta.stop_reason: `{reason}` is not a known stop reason")
                out.append({"type": "stop", "reason": reason})
        elif name == "error":
            error = _obj(data, "error", name)
            out.append({"type": "error", "message": _str(error, "message", f"{name}: error", True)})
        elif name == "ping":
            out.append({"type": "ping"})


CHAT_FINISH = frozenset({"tool_calls", "stop", "length", "content_filter"})
CHAT = "chat.completion.chunk"


class ChatDecoder:
    def __init__(self, quirks: dict):
        self.index_zero = bool(quirks.get("chat_index_zero"))
        self.ids: dict[int, str] = {}  # the id each index was announced with
        self.calls: list[str] = []  # under the quirk: ids in announcement order

    def decode(self, ev: dict, out: list) -> None:
        if ev["data"] == "[DONE]":
            return
        chunk = _payload(CHAT, ev["data"])
        error = chunk.get("error")
        if error is not None:
            if not isinstance(error, dict):
                raise malformed(f"{CHAT}: error: expected an object")
            out.append({"type": "error", "message": _str(error, "message", f"{CHAT}: error", True)})
            return
        choices = chunk.get("choices")
        if choices is None:
            raise malformed(f"{CHAT}: has neither `choices` nor `error`")
        if not isinstance(choices, list):
            raise malformed(f"{CHAT}: choices: expected an array")
        for choice in choices:
            if not isinstance(choice, dict):
                raise malformed(f"{CHAT}: choices: expected objects")
            if (_u32(choice, "index", f"{CHAT}: choices", required=False) or 0) != 0:
                continue  # other choices are other completions
            said = False
            delta = _obj(choice, "delta", f"{CHAT}: choices[0]", required=False)
            if delta is not None:
                text = _str(delta, "content", f"{CHAT}: delta")
                if text is not None:
                    out.append({"type": "text_delta", "text": text})
                    said = True
                if _str(delta, "refusal", f"{CHAT}: delta") is not None:
                    said = True
                entries = delta.get("tool_calls")
                if entries is not None:
                    if not isinstance(entries, list):
                        raise malformed(f"{CHAT}: delta.tool_calls: expected an array")
                    for k, entry in enumerate(entries):
                        if not isinstance(entry, dict):
                            raise malformed(f"{CHAT}: delta.tool_calls[{k}]: expected an object")
                        self._entry(k, entry, out)
                        said = True
            reason = _str(choice, "finish_reason", f"{CHAT}: choices[0]")
            if reason is not None:
                if reason not in CHAT_FINISH:
                    raise malformed(f"{CHAT}: finish_reason: `{reason}` is not a known finish reason")
                out.append({"type": "stop", "reason": reason})
            elif not said:
                out.append({"type": "ping"})  # a chunk that carries nothing is a keep-alive

    def _entry(self, k: int, entry: dict, out: list) -> None:
        where = f"{CHAT}: delta.tool_calls[{k}]"
        index = _u32(entry, "index", where)  # required: never taken as 0 when missing
        call_id = _str(entry, "id", where)
        function = _obj(entry, "function", where, required=False) or {}
        name = _str(function, "name", f"{where}.function")
        arguments = _str(function, "arguments", f"{where}.function")

        def announce(at: int) -> None:
            if name is None:
                raise malformed(f"{where}.function.name: the first entry of a call needs its name")
            out.append({"type": "call_start", "index": at, "call_id": call_id, "name": name})
            if arguments:
                out.append({"type": "args_delta", "index": at, "fragment": arguments})

        def fragment(at: int) -> None:
            out.append({"type": "args_delta", "index": at, "fragment": arguments or ""})

        if self.index_zero:
            # Calls are told apart by id; the neutral index is the announcement ordinal.
            if call_id is not None:
                for ordinal in range(len(self.calls) - 1, -1, -1):
                    if self.calls[ordinal] == call_id:
                        fragment(ordinal)
                        return
                announce(len(self.calls))
                self.calls.append(call_id)
            else:
                fragment(max(len(self.calls) - 1, 0))
            return
        held = self.ids.get(index)
        if call_id is not None and held == call_id:
            fragment(index)  # some servers repeat the id on every entry
        elif call_id is not None:
            announce(index)  # at an occupied index the core refuses it as a duplicate
            self.ids[index] = call_id
        else:
            fragment(index)


class ResponsesDecoder:
    def __init__(self, quirks: dict):
        pass  # every event names its output index: no state

    def decode(self, ev: dict, out: list) -> None:
        data_text = ev["data"]
        if ev.get("event"):
            name = ev["event"]
            data = None
        else:
            data = _payload("event without a name", data_text)
            name = _event_name(ev, data)
        if name not in (
            "response.output_item.added", "response.function_call_arguments.delta",
            "response.function_call_arguments.done", "response.output_text.delta",
            "response.failed", "error", "response.completed", "response.incomplete",
            "response.in_progress",
        ):
            return  # response.created, content parts, output_item.done, reasoning, ...
        if data is None:
            data = _payload(name, data_text)
        _check_type(name, data)
        if name == "response.output_item.added":
            index = _u32(data, "output_index", name)
            item = _obj(data, "item", name)
            if _str(item, "type", f"{name}: item", True) == "function_call":
                call_id = _str(item, "call_id", f"{name}: item")
                call_name = _str(item, "name", f"{name}: item")
                if call_id is None or call_name is None:
                    raise malformed(f"{name}: item: a function_call item needs `call_id` and `name`")
                out.append({"type": "call_start", "index": index, "call_id": call_id, "name": call_name})
                arguments = _str(item, "arguments", f"{name}: item")
                if arguments:
                    out.append({"type": "args_delta", "index": index, "fragment": arguments})
        elif name == "response.function_call_arguments.delta":
            index = _u32(data, "output_index", name)
            out.append({"type": "args_delta", "index": index, "fragment": _str(data, "delta", name, True)})
        elif name == "response.function_call_arguments.done":
            index = _u32(data, "output_index", name)
            out.append({"type": "call_stop", "index": index, "arguments": _str(data, "arguments", name, True)})
        elif name == "response.output_text.delta":
            out.append({"type": "text_delta", "text": _str(data, "delta", name, True)})
        elif name == "response.failed":
            response = _obj(data, "response", name)
            error = _obj(response, "error", f"{name}: response", required=False)
            message = "the response failed"
            if error is not None:
                message = _str(error, "message", f"{name}: response.error", True)
            out.append({"type": "error", "message": message})
        elif name == "error":
            out.append({"type": "error", "message": _str(data, "message", name, True)})
        elif name == "response.completed":
            out.append({"type": "stop", "reason": "completed"})
        elif name == "response.incomplete":
            out.append({"type": "stop", "reason": "incomplete"})
        else:
            out.append({"type": "ping"})  # a status event with nothing new


DECODERS = {
    "anthropic": AnthropicDecoder,
    "openai-chat": ChatDecoder,
    "openai-responses": ResponsesDecoder,
}


# --------------------------------------------------------------------------------------
# 4. SSE: raw bytes in transport chunks -> SSE events (WHATWG text/event-stream rules)
# --------------------------------------------------------------------------------------

_EOL = re.compile(rb"[\r\n]")


class SseDecoder:
    """Incremental `text/event-stream` decoder. Lines are split on the bytes CR, LF and CRLF
    (a CRLF split across chunks is one line end), then each line's bytes go through an
    incremental UTF-8 decoder, so a character split across chunks survives and an invalid
    byte is reported from the chunk that holds it. Strict: bad UTF-8 is an error, not
    U+FFFD."""

    def __init__(self):
        self.utf8 = codecs.getincrementaldecoder("utf-8")("strict")
        self.offset = 0  # bytes of the stream read before the current chunk
        self.first_line = True
        self.after_cr = False
        self.line: list[str] = []
        self.data: list[str] = []
        self.has_data = False
        self.event = ""
        self.id = None

    def feed(self, chunk: bytes, out: list) -> None:
        i, n = 0, len(chunk)
        while i < n:
            if self.after_cr:
                self.after_cr = False
                if chunk[i] == 0x0A:  # the LF of a CRLF whose CR ended the last line
                    i += 1
                    continue
            m = _EOL.search(chunk, i)
            if m is None:
                self._append(chunk, i, n)
                break
            j = m.start()
            self._append(chunk, i, j)
            self.after_cr = chunk[j] == 0x0D
            self._end_line(j, out)
            i = j + 1
        self.offset += n

    def finish(self) -> None:
        """The stream has ended: an unterminated event is discarded; a character left
        incomplete raises (the caller decides whether that matters)."""
        try:
            self.utf8.decode(b"", True)
        except UnicodeDecodeError:
            raise malformed("the event stream ends inside a UTF-8 character") from None

    def _append(self, chunk: bytes, start: int, end: int) -> None:
        if start == end:
            return
        try:
            text = self.utf8.decode(chunk[start:end], False)
        except UnicodeDecodeError as e:
            raise malformed(f"invalid UTF-8 near byte {self.offset + start + e.start} of the event stream") from None
        if text:
            self.line.append(text)

    def _end_line(self, at: int, out: list) -> None:
        try:
            self.utf8.decode(b"", True)  # a character cut short by the line end is invalid
        except UnicodeDecodeError:
            raise malformed(f"invalid UTF-8 before byte {self.offset + at} of the event stream") from None
        line = "".join(self.line)
        self.line.clear()
        if self.first_line:
            self.first_line = False
            if line.startswith("\ufeff"):
                line = line[1:]  # a BOM at the start of the stream is skipped
        if not line:
            if self.has_data:
                out.append({"event": self.event or None, "data": "\n".join(self.data), "id": self.id})
            self.data = []
            self.has_data = False
            self.event = ""
            self.id = None
            return
        if line[0] == ":":
            return  # a comment
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self.data.append(value)
            self.has_data = True
        elif name == "event":
            self.event = value
        elif name == "id" and "\0" not in value:
            self.id = value
        # retry and unknown fields are ignored


# --------------------------------------------------------------------------------------
# The three levels an accumulator can be fed at. Replace these with your library.
# --------------------------------------------------------------------------------------

class EventsAccumulator:
    def __init__(self, tools: list[dict], config: dict):
        self.core = Core(tools, config["schema"])

    def feed(self, unit: dict, out: Emit) -> None:
        self.core.on_event(unit, out)

    def finish(self, end: str, out: Emit) -> None:
        self.core.finish(end, out)


class WireAccumulator:
    def __init__(self, tools: list[dict], config: dict):
        self.decoder = DECODERS[config["dialect"]](config["quirks"])
        self.core = Core(tools, config["schema"])
        self.events: list[dict] = []

    def feed(self, unit: dict, out: Emit) -> None:
        events = self.events
        events.clear()
        self.decoder.decode(unit, events)
        for e in events:
            self.core.on_event(e, out)

    def finish(self, end: str, out: Emit) -> None:
        self.core.finish(end, out)


class BytesAccumulator:
    def __init__(self, tools: list[dict], config: dict):
        self.sse = SseDecoder()
        self.wire = WireAccumulator(tools, config)

    def feed(self, chunk: bytes, out: Emit) -> None:
        events: list[dict] = []
        try:
            self.sse.feed(chunk, events)
        except TurnError as e:
            # Events completed before the bad byte are still the stream's.
            for ev in events:
                self.wire.feed(ev, out)
            raise e
        for ev in events:
            self.wire.feed(ev, out)

    def finish(self, end: str, out: Emit) -> None:
        try:
            self.sse.finish()
        except TurnError:
            # A character cut by a dropped connection is the drop's doing.
            if end == "eof":
                raise
        self.wire.finish(end, out)


def make_events(tools: list[dict], config: dict) -> EventsAccumulator:
    return EventsAccumulator(tools, config)


def make_wire(tools: list[dict], config: dict) -> WireAccumulator:
    return WireAccumulator(tools, config)


def make_bytes(tools: list[dict], config: dict) -> BytesAccumulator:
    return BytesAccumulator(tools, config)


# --------------------------------------------------------------------------------------
# 5. The protocol
# --------------------------------------------------------------------------------------

def _bytes_of(payload: dict) -> bytes:
    text = payload.get("text")
    if text is not None:
        return text.encode("utf-8")
    return base64.b64decode(payload["bytes"], validate=True)


def run_case(case: dict, config: dict) -> list[dict]:
    """Feeds every stream to its own fresh accumulator, step by step in the case's order:
    `[s, k]` delivers unit k of stream s; `[s, len(units)]` ends stream s. A turn error
    ends a stream (nothing more is fed, finish is not called)."""
    level = config["level"]
    make = {"events": make_events, "wire": make_wire, "bytes": make_bytes}[level]
    streams = case["streams"]
    accs = []
    emits = []
    results = []
    for stream in streams:
        emits.append(Emit())
        result: dict = {}
        results.append(result)
        try:
            accs.append(make(stream.get("tools") or [], config))
        except Exception:
            result["crash"] = traceback.format_exc(limit=8)
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
        except TurnError as e:
            accs[s] = None
            results[s]["error"] = {
                "class": e.cls,
                "detail": e.detail,
                "units": out.units,
                "at_finish": out.at_finish,
            }
        except Exception:
            accs[s] = None
            results[s]["crash"] = traceback.format_exc(limit=8)
    for result, out in zip(results, emits):
        result["outcomes"] = out.outcomes
        result["text"] = "".join(out.text_pieces)
        if out.slots is not None:
            result["layout"] = out.slots
    return results


def main() -> int:
    stdin = sys.stdin.buffer
    stdout = sys.stdout.buffer
    config = {
        "level": "events",
        "dialect": "anthropic",
        "quirks": {},
        "schema": True,
    }
    dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode

    def send(message: dict) -> None:
        stdout.write(dumps(message).encode("utf-8") + b"\n")
        stdout.flush()

    for line in stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        cmd = request.get("cmd")
        if cmd == "start":
            if request.get("version") != PROTOCOL_VERSION:
                print(f"toolcert speaks protocol {request.get('version')}, this adapter {PROTOCOL_VERSION}",
                      file=sys.stderr)
            send({"version": PROTOCOL_VERSION, "implementation": IMPLEMENTATION})
        elif cmd == "configure":
            level = request.get("level")
            dialect = request.get("dialect")
            if level not in IMPLEMENTATION["levels"]:
                send({"ok": False, "reason": f"level {level!r} is not supported"})
                continue
            if level != "events" and dialect not in DECODERS:
                send({"ok": False, "reason": f"dialect {dialect!r} is not supported"})
                continue
            profile = request.get("profile") or {}
            config = {
                "level": level,
                "dialect": dialect,
                "quirks": request.get("quirks") or {},
                "schema": bool(profile.get("schema", True)),
            }
            send({"ok": True})
        elif cmd == "run":
            seq = request.get("seq")
            try:
                send({"seq": seq, "results": run_case(request["case"], config)})
            except Exception as e:
                send({"seq": seq, "errored": True,
                      "context": {"message": str(e), "traceback": traceback.format_exc()}})
        elif cmd == "stop":
            return 0
        else:
            print(f"unknown command {cmd!r}", file=sys.stderr)
            send({"seq": request.get("seq"), "errored": True,
                  "context": {"message": f"unknown command {cmd!r}"}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
