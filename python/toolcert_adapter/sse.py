"""SSE: raw bytes in transport chunks to SSE events, by the WHATWG `text/event-stream`
rules, with an incremental UTF-8 decoder. `toolcert_adapter.reference.bytes_from_wire` uses
it to feed a wire-level accumulator at the bytes level.
"""

from __future__ import annotations

import codecs
import re

from .protocol import malformed

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

