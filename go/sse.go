package toolcert

// SSE: the bytes level's transport chunks to the SSE events of the wire level, for an
// accumulator that reads events but is certified at the bytes level.

import (
	"strings"
	"unicode/utf8"
)

// SSEDecoder is an incremental text/event-stream decoder. Lines end at CR, LF or CRLF (a
// CRLF split across chunks is one line end); each line's bytes must be UTF-8, checked
// incrementally, so a character split across chunks survives and an invalid byte is a
// malformed turn error from the chunk that holds it (never U+FFFD). Comments are skipped,
// multi-line data joined with "\n", a BOM at the start dropped.
type SSEDecoder struct {
	offset    int    // bytes of the stream read before the current chunk
	firstLine bool   // no line has ended yet
	afterCR   bool   // the last chunk ended with CR: a LF next is the same line end
	line      []byte // the current line's bytes so far
	valid     int    // how many of them are checked whole characters
	data      []string
	hasData   bool
	event     string
	id        *string
}

// NewSSEDecoder is a decoder at the start of a stream.
func NewSSEDecoder() *SSEDecoder { return &SSEDecoder{firstLine: true} }

// Feed decodes one transport chunk and returns the events it completed.
func (d *SSEDecoder) Feed(chunk []byte) ([]WireEvent, error) {
	var out []WireEvent
	i := 0
	for i < len(chunk) {
		if d.afterCR {
			d.afterCR = false
			if chunk[i] == '\n' {
				i++
				continue
			}
		}
		j := i
		for j < len(chunk) && chunk[j] != '\r' && chunk[j] != '\n' {
			j++
		}
		d.line = append(d.line, chunk[i:j]...)
		if err := d.checkPartial(i); err != nil {
			return out, err
		}
		if j == len(chunk) {
			break
		}
		d.afterCR = chunk[j] == '\r'
		ev, ok, err := d.endLine(j)
		if err != nil {
			return out, err
		}
		if ok {
			out = append(out, ev)
		}
		i = j + 1
	}
	d.offset += len(chunk)
	return out, nil
}

// Finish: the stream has ended. An unterminated event is discarded; a character left
// incomplete is a malformed error (the caller decides whether that matters).
func (d *SSEDecoder) Finish() error {
	if !utf8.Valid(d.line) {
		return Malformed("the event stream ends inside a UTF-8 character")
	}
	return nil
}

// checkPartial checks the bytes of the line not checked yet: whole characters must be valid
// UTF-8, and a character the chunk cut may stay incomplete if it can still be completed.
func (d *SSEDecoder) checkPartial(at int) error {
	for d.valid < len(d.line) {
		rest := d.line[d.valid:]
		r, size := utf8.DecodeRune(rest)
		if r == utf8.RuneError && size <= 1 {
			if !utf8.FullRune(rest) && validPrefix(rest) {
				return nil // the next chunk may complete it
			}
			return Malformed("invalid UTF-8 near byte %d of the event stream", d.offset+at)
		}
		d.valid += size
	}
	return nil
}

// validPrefix: p (1 to 3 bytes, starting with a lead byte) can begin a valid character.
func validPrefix(p []byte) bool {
	for _, c := range []byte{0x80, 0x90, 0xA0, 0xB0, 0xBF} {
		full := append(append([]byte{}, p...), c, 0x80, 0x80)
		if r, size := utf8.DecodeRune(full); r != utf8.RuneError && size > len(p) {
			return true
		}
	}
	return false
}

func (d *SSEDecoder) endLine(at int) (WireEvent, bool, error) {
	if !utf8.Valid(d.line) {
		return WireEvent{}, false, Malformed("invalid UTF-8 before byte %d of the event stream", d.offset+at)
	}
	line := string(d.line)
	d.line, d.valid = d.line[:0], 0
	if d.firstLine {
		d.firstLine = false
		line = strings.TrimPrefix(line, "\ufeff") // a BOM at the start of the stream
	}
	if line == "" {
		var ev WireEvent
		ok := d.hasData
		if ok {
			ev.Data = strings.Join(d.data, "\n")
			if d.event != "" {
				e := d.event
				ev.Event = &e
			}
			ev.ID = d.id
		}
		d.data, d.hasData, d.event, d.id = nil, false, "", nil
		return ev, ok, nil
	}
	if line[0] == ':' {
		return WireEvent{}, false, nil // a comment
	}
	name, value, colon := strings.Cut(line, ":")
	if colon {
		value = strings.TrimPrefix(value, " ")
	}
	switch name {
	case "data":
		d.data = append(d.data, value)
		d.hasData = true
	case "event":
		d.event = value
	case "id":
		if !strings.ContainsRune(value, 0) {
			v := value
			d.id = &v
		}
	}
	// retry and unknown fields are ignored
	return WireEvent{}, false, nil
}
