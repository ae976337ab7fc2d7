"""Dialect decoders: one provider's SSE events to provider-neutral events, with no
accumulating (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses).

Each decoder is made once per stream, `DECODERS[dialect](quirks)`, and `decode(event, out)`
appends the neutral events (the events level's dicts) that one SSE event
`{"event", "data", "id"}` carries. Unreadable input is a `malformed` turn error naming the
event and field. `toolcert_adapter.reference.wire_from_events` uses them to feed an
events-level accumulator at the wire level.
"""

from __future__ import annotations

import json

from .protocol import TurnError, malformed
from .strict_json import NotJson, loads


def _payload(event: str, data: str) -> dict:
    try:
        value = loads(data, numbers=False)
    except NotJson as e:
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


def _skip_string(t: str, i: int) -> int:
    """The end of the JSON string literal starting at `t[i]` (a quote)."""
    i += 1
    while True:
        c = t[i]
        if c == "\\":
            i += 2
        elif c == '"':
            return i + 1
        else:
            i += 1


def _skip_ws(t: str, i: int) -> int:
    while i < len(t) and t[i] in " \t\r\n":
        i += 1
    return i


def _skip_value(t: str, i: int) -> int:
    """The end of the JSON value starting at `t[i]` (the text was checked to be JSON)."""
    if t[i] == '"':
        return _skip_string(t, i)
    if t[i] in "{[":
        depth = 0
        while True:
            c = t[i]
            if c == '"':
                i = _skip_string(t, i)
                continue
            if c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
    j = i
    while j < len(t) and t[j] not in ",}] \t\r\n":
        j += 1
    return j


def _items(t: str, i: int):
    """The (key or position, start, end) of each member of the object, or element of the
    array, starting at `t[i]`."""
    close = "}" if t[i] == "{" else "]"
    i = _skip_ws(t, i + 1)
    position = 0
    while t[i] != close:
        key = position
        if close == "}":
            end = _skip_string(t, i)
            key = loads(t[i:end], numbers=False)
            i = _skip_ws(t, _skip_ws(t, end) + 1)  # past the colon
        end = _skip_value(t, i)
        yield key, i, end
        position += 1
        i = _skip_ws(t, end)
        if t[i] == ",":
            i = _skip_ws(t, i + 1)


def _raw(t: str, path) -> str:
    """The exact text of the value at `path` (keys, then positions) in the JSON text `t`, as
    sent: the parsed value has lost its spacing, escapes and number spellings. A key written
    twice is its last value, as the parse reads it."""
    start, end = _skip_ws(t, 0), len(t)
    for step in path:
        found = [(s, e) for k, s, e in _items(t, start) if k == step]
        start, end = found[-1]
    return t[start:end]


def _tool_input(raw: str | None) -> str | None:
    """A `tool_use` input's argument text: `None` for no input, `null` or an empty object."""
    if raw is None or raw == "null":
        return None
    if raw.startswith("{") and raw[1:].strip(" \t\r\n") == "}":
        return None
    return raw


ANTHROPIC_STOPS = frozenset({"tool_use", "end_turn", "stop_sequence", "max_tokens", "refusal"})


class AnthropicDecoder:
    def __init__(self, quirks: dict):
        self.kinds: dict[int, str] = {}  # the kind of block each index last started
        self.started = False  # message_start came: another is a second generation spliced in

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
                raw = _raw(data_text, ["content_block", "input"]) if "input" in block else None
                whole = self._tool_use(name, index, block, raw, out)
                # A call whose start carried its whole input: no delta may add to it.
                self.kinds[index] = "tool_use_whole" if whole else "tool_use"
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
                if self.kinds.get(index) == "tool_use_whole":
                    if fragment:
                        raise malformed(
                            f"{name}: index {index}: an input_json_delta for a tool_use whose "
                            "content_block_start carried its whole input"
                        )
                else:
                    out.append({"type": "args_delta", "index": index, "fragment": fragment})
        elif name == "content_block_stop":
            index = _u32(data, "index", name)
            if self.kinds.get(index) == "tool_use_whole":
                self.kinds[index] = "tool_use"  # stopped: later deltas are the core's to judge
            if self.kinds.get(index) in (None, "tool_use"):
                out.append({"type": "call_stop", "index": index})
        elif name == "message_start":
            if self.started:
                raise malformed(f"{name}: a second message in one stream (another generation spliced in)")
            self.started = True
            self._message_start(name, data, data_text, out)
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

    def _tool_use(self, name: str, index: int, block: dict, raw: str | None, out: list) -> bool:
        """A tool_use block's announcement and, when its `input` carries the arguments (any
        JSON but an empty object or `null`), that input's exact text as its one fragment.
        Whether it did."""
        call_id = _str(block, "id", f"{name}: content_block")
        call_name = _str(block, "name", f"{name}: content_block")
        if call_id is None or call_name is None:
            raise malformed(f"{name}: content_block: a tool_use block needs `id` and `name`")
        out.append({"type": "call_start", "index": index, "call_id": call_id, "name": call_name})
        arguments = _tool_input(raw)
        if arguments is not None:
            out.append({"type": "args_delta", "index": index, "fragment": arguments})
        return arguments is not None

    def _message_start(self, name: str, data: dict, data_text: str, out: list) -> None:
        """Complete blocks in `message_start` (programmatic tool calling), at content indices
        0, 1, ...: a tool_use is a whole call, a text block its text, other blocks skipped."""
        message = data.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if content is None:
            return
        if not isinstance(content, list):
            raise malformed(f"{name}: message.content: expected an array")
        for index, block in enumerate(content):
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "tool_use":
                raw = _raw(data_text, ["message", "content", index, "input"]) if "input" in block else None
                self._tool_use(name, index, block, raw, out)
                out.append({"type": "call_stop", "index": index})
                self.kinds[index] = "tool_use"
            elif kind == "text":
                text = _str(block, "text", f"{name}: content_block")
                if text:
                    out.append({"type": "text_delta", "text": text})
                self.kinds[index] = "text"
            else:
                self.kinds[index] = "other"


CHAT_FINISH = frozenset({"tool_calls", "stop", "length", "content_filter"})
CHAT = "chat.completion.chunk"


class ChatDecoder:
    """OpenAI Chat, every server profile read by one rule (docs/SPEC.md section 3): calls are
    told apart by id where an entry has one and by index otherwise. A new non-empty id starts
    a call (at an occupied index too: some servers send index 0 for every call), announced when
    its name comes (some hosts send it in a later entry; none by the finish is malformed); a
    known id continues its call; an entry without an id (absent or "") continues the
    call its index holds, or with no index the latest call. Repeated ids and names are never
    concatenated; an entry with no argument bytes beside or after the finish reason adds
    nothing, and a second finish reason is no second stop. A call's neutral index is its
    announcement ordinal. The quirks are not read: a client cannot know its server."""

    # The neutral index of a fragment that continues no call: never a call's ordinal.
    NO_CALL = 0xFFFFFFFF

    def __init__(self, quirks: dict):
        self.ids: dict[str, int] = {}  # each call's id, with its ordinal
        self.held: dict[int, int] = {}  # which call each wire index holds (the latest there)
        self.calls = 0  # how many calls were announced
        self.finished = False
        # Calls whose name has not come yet: ordinal -> [id, argument bytes held for it].
        self.unnamed: dict[int, list] = {}

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
            # A usage-only chunk without `choices`, a prelude of content-filter results:
            # bookkeeping (docs/SPEC.md, "Dialect events").
            if chunk.get("usage") is not None or chunk.get("prompt_filter_results") is not None:
                return
            raise malformed(f"{CHAT}: has neither `choices` nor `error`")
        if not isinstance(choices, list):
            raise malformed(f"{CHAT}: choices: expected an array")
        for choice in choices:
            if not isinstance(choice, dict):
                raise malformed(f"{CHAT}: choices: expected objects")
            if (_u32(choice, "index", f"{CHAT}: choices", required=False) or 0) != 0:
                continue  # other choices are other completions
            said = False
            reason = _str(choice, "finish_reason", f"{CHAT}: choices[0]")
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
                        self._entry(k, entry, reason is not None, out)
                        said = True
            if reason is not None:
                if reason not in CHAT_FINISH:
                    raise malformed(f"{CHAT}: finish_reason: `{reason}` is not a known finish reason")
                for held_id, _ in self.unnamed.values():
                    raise malformed(f"{CHAT}: finish_reason: the call {held_id!r} never got its function.name")
                if not self.finished:  # some servers send a second finish chunk
                    self.finished = True
                    out.append({"type": "stop", "reason": reason})
            elif not said:
                out.append({"type": "ping"})  # a chunk that carries nothing is a keep-alive

    def _entry(self, k: int, entry: dict, finishing: bool, out: list) -> None:
        where = f"{CHAT}: delta.tool_calls[{k}]"
        index = _u32(entry, "index", where, required=False)  # some servers send none
        call_id = _str(entry, "id", where) or None  # an empty id is no id
        function = _obj(entry, "function", where, required=False) or {}
        name = _str(function, "name", f"{where}.function")
        arguments = _str(function, "arguments", f"{where}.function") or ""
        if call_id is not None and call_id not in self.ids:
            ordinal = self.calls
            self.calls += 1
            self.ids[call_id] = ordinal
            if index is not None:
                self.held[index] = ordinal
            if not name:
                # The name comes in a later entry (some hosts): the call waits for it.
                self.unnamed[ordinal] = [call_id, arguments]
                return
            out.append({"type": "call_start", "index": ordinal, "call_id": call_id, "name": name})
            if arguments:
                out.append({"type": "args_delta", "index": ordinal, "fragment": arguments})
            return
        if call_id is not None:
            call = self.ids[call_id]  # the same id again: its call
        elif index is not None:
            call = self.held.get(index)
        else:
            call = self.calls - 1 if self.calls else None
        if call is not None and call in self.unnamed:
            if not name:
                self.unnamed[call][1] += arguments
                return
            held_id, held = self.unnamed.pop(call)
            out.append({"type": "call_start", "index": call, "call_id": held_id, "name": name})
            if held:
                out.append({"type": "args_delta", "index": call, "fragment": held})
        if call is None:
            out.append({"type": "args_delta", "index": self.NO_CALL, "fragment": arguments})
        elif arguments or not (finishing or self.finished):
            out.append({"type": "args_delta", "index": call, "fragment": arguments})


class ResponsesDecoder:
    def __init__(self, quirks: dict):
        # Per output index of a call (calls are keyed by `output_index` alone; an `item_id`,
        # which some servers change on every event, is never read): None while its deltas
        # stream, then the arguments its first `done` repeated (to read its
        # `output_item.done`: docs/SPEC.md, WIRE-DONE).
        self.calls: dict[int, str | None] = {}
        # The indices argument bytes came for (a delta, or the announcement's arguments): a
        # `done` with none before it carries the call's arguments (LM Studio sends no delta).
        self.bytes: set[int] = set()
        self.created = False  # response.created came: another is a second generation spliced in

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
            "response.in_progress", "response.output_item.done",
        ):
            if name == "response.created":
                if self.created:
                    raise malformed(f"{name}: a second response in one stream (another generation spliced in)")
                self.created = True
            return  # response.created, content parts, reasoning, ...
        if data is None:
            data = _payload(name, data_text)
        _check_type(name, data)
        if name == "response.output_item.added":
            index = _u32(data, "output_index", name)
            item = _obj(data, "item", name)
            # An item of another type (a hosted tool's, whatever its fields hold) is skipped.
            if item.get("type") == "function_call":
                call_id = _str(item, "call_id", f"{name}: item")
                call_name = _str(item, "name", f"{name}: item")
                if call_id is None or call_name is None:
                    raise malformed(f"{name}: item: a function_call item needs `call_id` and `name`")
                out.append({"type": "call_start", "index": index, "call_id": call_id, "name": call_name})
                self.calls[index] = None
                arguments = _str(item, "arguments", f"{name}: item")
                if arguments:
                    out.append({"type": "args_delta", "index": index, "fragment": arguments})
                    self.bytes.add(index)
        elif name == "response.output_item.done":
            index = _u32(data, "output_index", name)
            item = _obj(data, "item", name)
            if item.get("type") == "function_call":
                self._item_done(name, index, item, out)
        elif name == "response.function_call_arguments.delta":
            index = _u32(data, "output_index", name)
            out.append({"type": "args_delta", "index": index, "fragment": _str(data, "delta", name, True)})
            self.bytes.add(index)
        elif name == "response.function_call_arguments.done":
            index = _u32(data, "output_index", name)
            arguments = _str(data, "arguments", name, True)
            if index in self.calls and index not in self.bytes and arguments:
                out.append({"type": "args_delta", "index": index, "fragment": arguments})
            self.calls[index] = arguments
            self.bytes.add(index)
            out.append({"type": "call_stop", "index": index, "arguments": arguments})
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

    def _item_done(self, name: str, index: int, item: dict, out: list) -> None:
        arguments = _str(item, "arguments", f"{name}: item")
        if index not in self.calls:
            # The call's only event: announcement, whole arguments and terminal at once.
            call_id = _str(item, "call_id", f"{name}: item")
            call_name = _str(item, "name", f"{name}: item")
            if call_id is None or call_name is None or arguments is None:
                raise malformed(f"{name}: item: a function_call item needs `call_id`, `name` and `arguments`")
            out.append({"type": "call_start", "index": index, "call_id": call_id, "name": call_name})
            if arguments:
                out.append({"type": "args_delta", "index": index, "fragment": arguments})
            out.append({"type": "call_stop", "index": index, "arguments": None})
            self.calls[index] = arguments
            self.bytes.add(index)
        elif self.calls[index] is not None:
            # A second repeat of the arguments: it must say what the first said.
            if arguments is not None and arguments != self.calls[index]:
                raise TurnError("done_mismatch", f"{name}: item.arguments differ from function_call_arguments.done's")
        else:
            # No `function_call_arguments.done`: this is the terminal, which carries the
            # arguments when no bytes came before it, else repeats them.
            if index not in self.bytes and arguments:
                out.append({"type": "args_delta", "index": index, "fragment": arguments})
            self.calls[index] = arguments or ""
            self.bytes.add(index)
            out.append({"type": "call_stop", "index": index, "arguments": arguments})


# Gemini `streamGenerateContent`: calls carry no index; a call's arguments come whole
# (`args`, an object) or, under Vertex's streamed arguments, as typed values at JSON paths,
# turned here into the argument text they add (docs/SPEC.md "Gemini: arguments by JSON path").


def _gemini_path(path: str, where: str) -> list:
    """A `jsonPath`'s steps: member names and array positions (RFC 9535 forms)."""
    if not path.startswith("$"):
        raise malformed(f"{where}: jsonPath `{path}` does not start with `$`")
    steps, i = [], 1
    while i < len(path):
        if len(steps) >= 256:
            raise malformed(f"{where}: jsonPath `{path}` is too deep")
        c = path[i]
        if c == ".":
            j = i + 1
            while j < len(path) and path[j] not in ".[":
                j += 1
            if j == i + 1:
                raise malformed(f"{where}: jsonPath `{path}` has an empty member name")
            steps.append(path[i + 1 : j])
            i = j
        elif c == "[" and i + 1 < len(path) and path[i + 1] in "'\"":
            q, j, name = path[i + 1], i + 2, []
            while j < len(path) and path[j] != q:
                if path[j] == "\\" and j + 1 < len(path):
                    e = path[j + 1]
                    if e == "u":
                        hexits = path[j + 2 : j + 6]
                        code = int(hexits, 16) if len(hexits) == 4 and all(c in "0123456789abcdefABCDEF" for c in hexits) else -1
                        if not 0 <= code < 0xD800 and not 0xE000 <= code <= 0xFFFF:
                            raise malformed(f"{where}: jsonPath `{path}` has a malformed `[...]` step")
                        name.append(chr(code))
                        j += 6
                        continue
                    name.append({"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}.get(e, e))
                    j += 2
                else:
                    name.append(path[j])
                    j += 1
            if j + 1 >= len(path) or path[j + 1] != "]":
                raise malformed(f"{where}: jsonPath `{path}` has a malformed `[...]` step")
            steps.append("".join(name))
            i = j + 2
        elif c == "[":
            j = path.find("]", i)
            digits = path[i + 1 : j] if j > 0 else ""
            if not digits.isdigit() or len(digits) > 9:
                raise malformed(f"{where}: jsonPath `{path}` has a malformed `[...]` step")
            steps.append(int(digits))
            i = j + 1
        else:
            raise malformed(f"{where}: jsonPath `{path}` has a step that is neither `.name` nor `[...]`")
    return steps


class _GeminiWriter:
    """The argument text pieces at paths add: containers opened and closed by path, a
    string piece's content as written (escapes kept), a scalar as written."""

    def __init__(self):
        self.open = []  # [array, step, members, last]
        self.string = None

    def piece(self, path: list, kind: str, raw: str, last: bool, where: str) -> str:
        out = []
        if self.string is not None:
            if kind == "str" and self.string == path:
                out.append(raw)
                if last:
                    out.append('"')
                    self.string = None
                return "".join(out)
            out.append('"')
            self.string = None
        if not path:
            raise malformed(f"{where}: a value at `$` itself")
        parents, member = path[:-1], path[-1]
        if not self.open:
            out.append("{")
            self.open.append([False, None, 0, None])
        same = 0
        for o, s in zip(self.open[1:], parents):
            if o[1] != s or type(o[1]) is not type(s):
                break
            same += 1
        while len(self.open) > same + 1:
            self._close(out)
        for k, seg in enumerate(parents[same:]):
            self._member(seg, out, where)
            nxt = parents[same + k + 1] if same + k + 1 < len(parents) else member
            array = isinstance(nxt, int)
            out.append("[" if array else "{")
            self.open.append([array, seg, 0, None])
        self._member(member, out, where)
        self.open[-1][3] = member
        if kind == "str":
            out.append('"' + raw)
            if last:
                out.append('"')
            else:
                self.string = list(path)
        else:
            out.append(raw)
        return "".join(out)

    def _member(self, seg, out, where):
        top = self.open[-1]
        if top[3] == seg and type(top[3]) is type(seg):
            raise malformed(f"{where}: the path goes back to a member already written")
        if not top[0] and isinstance(seg, str):
            if top[2]:
                out.append(",")
            out.append(json.dumps(seg, ensure_ascii=False) + ":")
        elif top[0] and isinstance(seg, int) and seg == top[2]:
            if top[2]:
                out.append(",")
        else:
            raise malformed(f"{where}: a path step of the wrong kind or out of order")
        top[2] += 1

    def _close(self, out):
        o = self.open.pop()
        out.append("]" if o[0] else "}")
        if self.open:
            self.open[-1][3] = o[1]

    def end(self) -> str:
        out = []
        if self.string is not None:
            out.append('"')
            self.string = None
        while self.open:
            self._close(out)
        return "".join(out)


GEMINI_STOPS = {"STOP": "stop", "MAX_TOKENS": "max_tokens", "PROHIBITED_CONTENT": "refusal", "BLOCKLIST": "refusal", "SPII": "refusal"}


class GeminiDecoder:
    def __init__(self, quirks=None):
        self.calls = 0
        self.live = None  # (ordinal, writer)

    def _end_live(self, out):
        if self.live is not None:
            index, w = self.live
            self.live = None
            text = w.end()
            if text:
                out.append({"type": "args_delta", "index": index, "fragment": text})
            out.append({"type": "call_stop", "index": index})

    def decode(self, ev: dict, out: list) -> None:
        data = ev.get("data", "")
        if not data.strip():
            return
        where = "gemini chunk"
        # Not the strict payload reader: a string piece may end inside a surrogate pair,
        # and every value is read from the text as sent anyway.
        try:
            chunk = json.loads(data)
        except ValueError as e:
            raise malformed(f"{where}: data is not JSON: {e}") from None
        if not isinstance(chunk, dict):
            raise malformed(f"{where}: data is not a JSON object")
        error = chunk.get("error")
        if isinstance(error, dict):
            out.append({"type": "error", "message": str(error.get("message", ""))})
            return
        cands = chunk.get("candidates")
        if not isinstance(cands, list) or not cands:
            out.append({"type": "ping"})
            return
        cand = cands[0]
        if not isinstance(cand, dict):
            raise malformed(f"{where}: candidates[0]: expected an object")
        content = cand.get("content") or {}
        parts = content.get("parts") or [] if isinstance(content, dict) else []
        if not isinstance(parts, list):
            raise malformed(f"{where}: parts: expected an array")
        for p, part in enumerate(parts):
            if not isinstance(part, dict):
                raise malformed(f"{where}: parts[{p}]: expected an object")
            fc = part.get("functionCall")
            if isinstance(fc, dict):
                self._call(data, p, fc, out)
            elif isinstance(part.get("text"), str) and not part.get("thought") and part["text"]:
                out.append({"type": "text_delta", "text": part["text"]})
        reason = cand.get("finishReason")
        if isinstance(reason, str):
            self._end_live(out)
            out.append({"type": "stop", "reason": GEMINI_STOPS.get(reason, "content_filter")})
        elif not parts:
            out.append({"type": "ping"})

    def _pieces(self, data, p, fc, w, where):
        text = []
        args = fc.get("partialArgs") or []
        if not isinstance(args, list):
            raise malformed(f"{where}: partialArgs: expected an array")
        # Each entry's text found in one pass over the array (a chunk may carry thousands).
        spans = []
        if args:
            listed = _raw(data, ["candidates", 0, "content", "parts", p, "functionCall", "partialArgs"])
            spans = [listed[s:e] for _, s, e in _items(listed, 0)]
        for j, arg in enumerate(args):
            w_where = f"{where}: partialArgs[{j}]"
            if not isinstance(arg, dict):
                raise malformed(f"{w_where}: expected an object")
            path = _gemini_path(_str(arg, "jsonPath", w_where, True), w_where)
            entry = spans[j]
            last = not arg.get("willContinue")
            if "stringValue" in arg:
                if not isinstance(arg["stringValue"], str):
                    raise malformed(f"{w_where}: stringValue: expected a string")
                raw = _raw(entry, ["stringValue"])[1:-1]
                text.append(w.piece(path, "str", raw, last, w_where))
            elif "numberValue" in arg:
                raw = _raw(entry, ["numberValue"])
                if not (raw[:1] == "-" or raw[:1].isdigit()):
                    raise malformed(f"{w_where}: numberValue: expected a number")
                text.append(w.piece(path, "scalar", raw, True, w_where))
            elif "boolValue" in arg:
                text.append(w.piece(path, "scalar", "true" if arg["boolValue"] else "false", True, w_where))
            elif "nullValue" in arg:
                text.append(w.piece(path, "scalar", "null", True, w_where))
            else:
                raise malformed(f"{w_where}: no value")
        return "".join(text)

    def _call(self, data, p, fc, out):
        where = f"gemini chunk: parts[{p}].functionCall"
        name = _str(fc, "name", where)
        if name:
            self._end_live(out)
            ordinal = self.calls
            self.calls += 1
            call_id = _str(fc, "id", where) or f"call_{ordinal}"
            out.append({"type": "call_start", "index": ordinal, "call_id": call_id, "name": name})
            if fc.get("args") is not None:
                raw = _raw(data, ["candidates", 0, "content", "parts", p, "functionCall", "args"])
                if not raw.startswith("{"):
                    raise malformed(f"{where}: args: expected an object")
                out.append({"type": "args_delta", "index": ordinal, "fragment": raw})
            w = _GeminiWriter()
            self.live = (ordinal, w)
            text = self._pieces(data, p, fc, w, where)
            if text:
                out.append({"type": "args_delta", "index": ordinal, "fragment": text})
            if not fc.get("willContinue"):
                self._end_live(out)
            return
        if self.live is None:
            if not fc.get("partialArgs") and fc.get("args") is None:
                return
            text = self._pieces(data, p, fc, _GeminiWriter(), where)
            out.append({"type": "args_delta", "index": max(self.calls - 1, 0), "fragment": text})
            return
        index, w = self.live
        text = self._pieces(data, p, fc, w, where)
        if text:
            out.append({"type": "args_delta", "index": index, "fragment": text})
        if not fc.get("willContinue"):
            self._end_live(out)


DECODERS = {
    "anthropic": AnthropicDecoder,
    "openai-chat": ChatDecoder,
    "openai-responses": ResponsesDecoder,
    "gemini": GeminiDecoder,
}


