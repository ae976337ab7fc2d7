// Package toyacc is a toy streaming tool-call accumulator: the library under test in the
// example. It buffers argument fragments per call index and parses each buffer once the
// stream is done. New(parse, true) has the seeds' first bug: it trims every fragment, so a
// space at a fragment's edge (inside a string) vanishes.
package toyacc

import (
	"fmt"
	"strings"
)

// ProtocolError is a fault of the stream; Kind is the turn error class it is.
type ProtocolError struct{ Kind, Message string }

func (e *ProtocolError) Error() string { return e.Message }

// Call is one call: its buffer, and after Finish its status (ok, abandoned, truncated,
// unparseable) and arguments.
type Call struct {
	ID, Name string
	parts    []string
	closed   bool
	Status   string
	Args     any
}

// Raw is the buffer as received.
func (c *Call) Raw() string { return strings.Join(c.parts, "") }

var truncating = map[string]bool{"max_tokens": true, "refusal": true, "length": true, "content_filter": true, "incomplete": true}

// Accumulator keys calls by their index.
type Accumulator struct {
	parse      func(string) (any, error)
	trim       bool
	calls      []*Call
	byIndex    map[uint32]*Call
	stopReason string
	stopped    bool
}

// New is an accumulator that parses each buffer with parse; trim is the bug.
func New(parse func(string) (any, error), trim bool) *Accumulator {
	return &Accumulator{parse: parse, trim: trim, byIndex: map[uint32]*Call{}}
}

// Start announces the call at index.
func (a *Accumulator) Start(index uint32, id, name string) error {
	if a.stopped {
		return &ProtocolError{"fragment_after_stop", fmt.Sprintf("call %d after the stop", index)}
	}
	if _, dup := a.byIndex[index]; dup {
		return &ProtocolError{"duplicate_announcement", fmt.Sprintf("index %d announced twice", index)}
	}
	c := &Call{ID: id, Name: name, Status: "abandoned"}
	a.byIndex[index] = c
	a.calls = append(a.calls, c)
	return nil
}

func (a *Accumulator) open(index uint32) (*Call, error) {
	c, ok := a.byIndex[index]
	if !ok {
		return nil, &ProtocolError{"unannounced_index", fmt.Sprintf("index %d was never announced", index)}
	}
	if c.closed || a.stopped {
		return nil, &ProtocolError{"fragment_after_stop", fmt.Sprintf("index %d is closed", index)}
	}
	return c, nil
}

// Append adds a fragment to the call at index.
func (a *Accumulator) Append(index uint32, fragment string) error {
	c, err := a.open(index)
	if err != nil {
		return err
	}
	if a.trim {
		fragment = strings.TrimSpace(fragment)
	}
	c.parts = append(c.parts, fragment)
	return nil
}

// Close ends the call at index; arguments, when the dialect repeats them, must equal the
// fragments joined.
func (a *Accumulator) Close(index uint32, arguments *string) error {
	c, err := a.open(index)
	if err != nil {
		return err
	}
	if arguments != nil && *arguments != c.Raw() {
		return &ProtocolError{"done_mismatch", fmt.Sprintf("index %d: done differs from the deltas", index)}
	}
	c.closed = true
	return nil
}

// Stop records the message's stop reason.
func (a *Accumulator) Stop(reason string) error {
	if a.stopped {
		return &ProtocolError{"fragment_after_stop", "a second stop reason"}
	}
	a.stopped, a.stopReason = true, reason
	return nil
}

// Finish settles every call: without a stop reason the turn may have been cut (abandoned);
// a truncating one truncates; otherwise each buffer is parsed (no bytes at all is {}).
func (a *Accumulator) Finish() []*Call {
	for _, c := range a.calls {
		switch {
		case !a.stopped:
		case truncating[a.stopReason]:
			c.Status = "truncated"
		case c.Raw() == "":
			c.Args, c.Status = map[string]any{}, "ok"
		default:
			if v, err := a.parse(c.Raw()); err == nil {
				c.Args, c.Status = v, "ok"
			} else {
				c.Status = "unparseable"
			}
		}
	}
	return a.calls
}
