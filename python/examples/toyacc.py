"""A toy streaming tool-call accumulator: the library under test in the examples.

It buffers argument fragments per call index and parses each buffer once the stream is
done. `ToolCallAccumulator(trim=True)` has the seeds' first bug: it trims every fragment,
so a space at a fragment's edge (inside a string) vanishes.
"""


class ProtocolError(Exception):
    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


class Call:
    def __init__(self, call_id, name):
        self.id, self.name, self.parts, self.closed = call_id, name, [], False
        self.status, self.args = "abandoned", None

    @property
    def raw(self):
        return "".join(self.parts)


class ToolCallAccumulator:
    TRUNCATING = {"max_tokens", "refusal", "length", "content_filter", "incomplete"}

    def __init__(self, parse, trim=False):
        self.parse, self.trim = parse, trim
        self.calls, self.by_index, self.stop_reason = [], {}, None

    def start(self, index, call_id, name):
        if self.stop_reason is not None:
            raise ProtocolError("fragment_after_stop", f"call {index} after the stop")
        if index in self.by_index:
            raise ProtocolError("duplicate_announcement", f"index {index} announced twice")
        self.by_index[index] = call = Call(call_id, name)
        self.calls.append(call)

    def _open(self, index):
        call = self.by_index.get(index)
        if call is None:
            raise ProtocolError("unannounced_index", f"index {index} was never announced")
        if call.closed or self.stop_reason is not None:
            raise ProtocolError("fragment_after_stop", f"index {index} is closed")
        return call

    def append(self, index, fragment):
        self._open(index).parts.append(fragment.strip() if self.trim else fragment)

    def close(self, index, arguments=None):
        call = self._open(index)
        if arguments is not None and arguments != call.raw:
            raise ProtocolError("done_mismatch", f"index {index}: done differs from the deltas")
        call.closed = True

    def stop(self, reason):
        if self.stop_reason is not None:
            raise ProtocolError("fragment_after_stop", "a second stop reason")
        self.stop_reason = reason

    def finish(self):
        for call in self.calls:
            if self.stop_reason is None:
                continue  # the turn may have been cut: abandoned
            if self.stop_reason in self.TRUNCATING:
                call.status = "truncated"
                continue
            try:
                call.args, call.status = (self.parse(call.raw) if call.raw else {}), "ok"
            except ValueError:
                call.status = "unparseable"
        return self.calls
