package toolcert

// A correct accumulator built from the protocol's pieces, and the lifts between levels.
//
//   - Core: the provider-neutral accumulator (keyed by index with the call id kept, append
//     only, protocol errors for an unannounced index, a second announcement and a fragment
//     after stop, one strict parse per buffer at the end, nothing dispatched from a truncated
//     or unfinished turn).
//   - WireFromEvents(factory): an events-level accumulator fed at the wire level, through the
//     reference dialect decoders; BytesFromWire(factory): a wire-level one fed at the bytes
//     level, through SSEDecoder. An accumulator library that only takes neutral deltas can be
//     certified at every level with them (what is certified below the events level is then
//     these decoders, not your library).

import (
	"strconv"
	"strings"
)

type coreCall struct {
	id      string
	name    string
	parts   strings.Builder
	stopped bool
}

type coreSlot struct {
	call string // the call's id, or "" for a text slot
	text strings.Builder
}

// Core is one stream's reference accumulator; NewCore is its factory.
type Core struct {
	schemas map[string]any
	calls   []*coreCall
	byIndex map[uint32]*coreCall // a second announcement is a turn error: one call per index
	stop    string
	stopped bool
	errored bool
	slots   []*coreSlot
}

// NewCore is the events-level Factory of Core.
func NewCore(tools []Tool, config Config) (Accumulator[Event], error) {
	c := &Core{schemas: map[string]any{}, byIndex: map[uint32]*coreCall{}}
	if config.Schema {
		for _, t := range tools {
			if _, seen := c.schemas[t.Name]; !seen && t.Schema != nil {
				c.schemas[t.Name] = t.Schema
			}
		}
	}
	return c, nil
}

// call is the call announced at index, or nil. A map, not a scan of the calls: a scan on
// every announcement (the duplicate check) is quadratic in the calls of a turn (10,000 under
// toolcert bench --bounded), and the floor must be linear.
func (c *Core) call(index uint32) *coreCall { return c.byIndex[index] }

func idx(i uint32) string { return strconv.FormatUint(uint64(i), 10) }

// Feed implements Accumulator.
func (c *Core) Feed(e Event, out *Emit) error {
	switch e.Type {
	case "text_delta":
		out.Text(e.Text)
		if n := len(c.slots); n == 0 || c.slots[n-1].call != "" {
			c.slots = append(c.slots, &coreSlot{})
		}
		c.slots[len(c.slots)-1].text.WriteString(e.Text)
	case "call_start":
		if c.stopped {
			return Turn("fragment_after_stop", "call "+idx(e.Index)+" announced after the stop")
		}
		if c.call(e.Index) != nil {
			return Turn("duplicate_announcement", "index "+idx(e.Index)+" announced twice (as "+e.CallID+")")
		}
		c.slots = append(c.slots, &coreSlot{call: e.CallID})
		call := &coreCall{id: e.CallID, name: e.Name}
		c.calls = append(c.calls, call)
		c.byIndex[e.Index] = call
	case "args_delta":
		call := c.call(e.Index)
		if call == nil {
			return Turn("unannounced_index", "fragment for unannounced index "+idx(e.Index))
		}
		if call.stopped || c.stopped {
			return Turn("fragment_after_stop", "fragment for index "+idx(e.Index)+" after its stop")
		}
		call.parts.WriteString(e.Fragment) // append only: no trim, no parse, no decode
	case "call_stop":
		call := c.call(e.Index)
		if call == nil {
			return Turn("unannounced_index", "stop for unannounced index "+idx(e.Index))
		}
		if call.stopped {
			return Turn("fragment_after_stop", "index "+idx(e.Index)+" stopped twice")
		}
		if e.Arguments != nil && *e.Arguments != call.parts.String() {
			return Turn("done_mismatch", "index "+idx(e.Index)+": the terminal's arguments differ from the fragments")
		}
		call.stopped = true
	case "stop":
		if c.stopped {
			return Turn("fragment_after_stop", "a second stop reason")
		}
		c.stop, c.stopped = e.Reason, true
	case "error":
		c.errored = true
	}
	// error and ping: the stream ends (or goes on) and Finish accounts for live calls;
	// foreign blocks are never calls or text.
	return nil
}

func (c *Core) judge(call *coreCall) Outcome {
	raw := call.parts.String()
	switch {
	case !c.stopped:
		// Without the stop reason the turn may yet have been cut: never dispatch.
		return Failed("abandoned", call.id, call.name, raw)
	case Truncating[c.stop]:
		return Failed("truncated", call.id, call.name, raw)
	}
	var args any = map[string]any{} // a call with no argument bytes takes no arguments
	if raw != "" {
		v, err := ParseString(raw)
		if err != nil {
			return Failed("unparseable", call.id, call.name, raw)
		}
		args = v
	}
	if schema, ok := c.schemas[call.name]; ok {
		if errs := SchemaErrors(schema, args); len(errs) > 0 {
			return SchemaError(call.id, call.name, args, errs)
		}
	}
	return Dispatchable(call.id, call.name, args)
}

// Finish implements Accumulator.
func (c *Core) Finish(_ End, out *Emit) error {
	for _, call := range c.calls {
		out.Outcome(c.judge(call))
	}
	layout := make([]Slot, 0, len(c.slots))
	for _, s := range c.slots {
		if s.call != "" {
			layout = append(layout, Slot{Slot: "call", CallID: s.call})
		} else {
			layout = append(layout, Slot{Slot: "text", Text: s.text.String()})
		}
	}
	out.Layout(layout)
	// How the turn ended is what the stream said: no stop reason is made up for a stream
	// that simply stopped.
	switch {
	case c.stopped && Truncating[c.stop]:
		out.Ending("truncated", c.stop)
	case c.stopped:
		out.Ending("complete", c.stop)
	case c.errored:
		out.Ending("errored", "")
	default:
		out.Ending("abandoned", "")
	}
	return nil
}

type wireLift struct {
	decoder Decoder
	inner   Accumulator[Event]
}

func (w wireLift) Feed(ev WireEvent, out *Emit) error {
	events, err := w.decoder.Decode(ev)
	if err != nil {
		return err
	}
	for _, e := range events {
		if err := w.inner.Feed(e, out); err != nil {
			return err
		}
	}
	return nil
}

func (w wireLift) Finish(end End, out *Emit) error { return w.inner.Finish(end, out) }

// WireFromEvents is the wire-level factory that decodes the configured dialect with the
// reference decoders and feeds the neutral events to an accumulator from factory.
func WireFromEvents(factory Factory[Event]) Factory[WireEvent] {
	return func(tools []Tool, config Config) (Accumulator[WireEvent], error) {
		decoder, err := NewDecoder(config.Dialect)
		if err != nil {
			return nil, err
		}
		inner, err := factory(tools, config)
		if err != nil {
			return nil, err
		}
		return wireLift{decoder, inner}, nil
	}
}

type bytesLift struct {
	sse   *SSEDecoder
	inner Accumulator[WireEvent]
}

func (b bytesLift) Feed(chunk []byte, out *Emit) error {
	events, err := b.sse.Feed(chunk)
	// Events completed before a bad byte are still the stream's.
	for _, ev := range events {
		if ferr := b.inner.Feed(ev, out); ferr != nil {
			return ferr
		}
	}
	return err
}

func (b bytesLift) Finish(end End, out *Emit) error {
	// A character cut by a dropped connection is the drop's doing.
	if err := b.sse.Finish(); err != nil && end == EndEOF {
		return err
	}
	return b.inner.Finish(end, out)
}

// BytesFromWire is the bytes-level factory that decodes SSE and feeds the events to an
// accumulator from the wire-level factory.
func BytesFromWire(factory Factory[WireEvent]) Factory[[]byte] {
	return func(tools []Tool, config Config) (Accumulator[[]byte], error) {
		inner, err := factory(tools, config)
		if err != nil {
			return nil, err
		}
		return bytesLift{NewSSEDecoder(), inner}, nil
	}
}

// ReferenceServer serves an events-level factory at every level, through the reference
// decoders: ReferenceServer(impl, toolcert.NewCore) is the reference accumulator.
func ReferenceServer(impl Implementation, factory Factory[Event]) Server {
	wire := WireFromEvents(factory)
	return Server{Implementation: impl, Events: factory, Wire: wire, Bytes: BytesFromWire(wire)}
}
