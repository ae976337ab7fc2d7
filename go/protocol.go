package toolcert

// The subprocess protocol loop (docs/PROTOCOL.md, version 1), the adapter's side.
//
// toolcert starts the adapter, sends one JSON request per line on stdin (`start`,
// `configure`, `run`, `stop`) and reads one reply per line on stdout. Serve answers them: it
// declares the implementation, keeps the configured setting, feeds each stream of a case to
// a fresh accumulator from the factory of the configured level, in the order the case gives,
// stamps every outcome and turn error with the units delivered so far, and writes the
// results. The accumulator is yours; this loop is the same for every adapter.

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
)

// ProtocolVersion is the version of docs/PROTOCOL.md this package speaks.
const ProtocolVersion = 1

// The levels an accumulator can be fed at.
const (
	LevelEvents = "events"
	LevelWire   = "wire"
	LevelBytes  = "bytes"
)

// Dialects are the dialects a wire or bytes level may speak; BytesOnlyDialects may be
// declared at the bytes level only (binary framing: AWS event stream).
var (
	Dialects          = []string{"anthropic", "openai-chat", "openai-responses"}
	BytesOnlyDialects = []string{"bedrock"}
)

// Quirks lists every wire behaviour of the server profiles (docs/SPEC.md, "Server
// profiles"): what Implementation.Quirks may declare. toolcert runs a profile only when the
// adapter declares all its behaviours; an adapter that hands the bytes to an SDK declares
// them all (an SDK reads whatever comes), one with its own decoder those it reads.
var Quirks = []string{
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
}

// ErrorClasses are the protocol's turn error classes: compared by class, never by message.
var ErrorClasses = []string{
	"unannounced_index", "duplicate_announcement", "fragment_after_stop", "done_mismatch",
	"malformed", "upstream", "truncated", "incomplete", "limit", "other",
}

// Caps lists the caps Implementation.Caps may declare (docs/PROTOCOL.md, "Caps."): a stream
// past one may be refused with a turn error of class "limit".
var Caps = []string{"calls", "argument_bytes", "fragments", "depth"}

// Truncating holds the stop reasons that say the output was cut: nothing of such a turn may
// be dispatched.
var Truncating = map[string]bool{
	"max_tokens": true, "refusal": true, "length": true, "content_filter": true, "incomplete": true,
}

// Endings: how a turn can end, as an accumulator says it (Emit.Ending).
var Endings = []string{"complete", "truncated", "abandoned", "errored"}

// End is how the transport closed after a stream's last unit.
type End string

const (
	EndEOF        End = "eof"        // the server closed the stream
	EndDisconnect End = "disconnect" // the connection dropped
	EndCancel     End = "cancel"     // the client cancelled
)

// TurnError fails the whole turn (the stream ends there). Make one with Turn or Malformed.
type TurnError struct {
	Class  string
	Detail string
}

func (e *TurnError) Error() string { return e.Class + ": " + e.Detail }

// Turn is a turn error of class cls (one of ErrorClasses). An unknown class is an error of
// the adapter itself, so it comes back as a plain error: the stream's crash.
func Turn(cls, detail string) error {
	if !slices.Contains(ErrorClasses, cls) {
		return fmt.Errorf("%q is not a turn error class (one of %s)", cls, strings.Join(ErrorClasses, ", "))
	}
	return &TurnError{Class: cls, Detail: detail}
}

// Malformed: the stream could not be read (bad SSE, bad UTF-8, a dialect event missing a
// field).
func Malformed(format string, args ...any) error {
	return &TurnError{Class: "malformed", Detail: fmt.Sprintf(format, args...)}
}

// SkipError, returned from a factory, Feed or Finish: this adapter cannot run the case (the
// reply is `skipped`, recorded against the subject without a restart).
type SkipError struct{ Reason string }

func (e *SkipError) Error() string { return "skipped: " + e.Reason }

// Skip is a SkipError with that reason.
func Skip(reason string) error { return &SkipError{Reason: reason} }

// Config is the setting of the last `configure`.
type Config struct {
	Level   string
	Dialect string
	// Quirks: the server profile's wire behaviours (chat_index_zero is always there).
	Quirks map[string]bool
	// Schema: validate arguments against the tool's schema (only with Implementation.Schema).
	Schema bool
	// Memory: each run reply carries `peak_bytes`, the run's peak heap (profile.memory;
	// toolcert bench --bounded asks).
	Memory bool
}

// Tool is one of the request's tools: its name and, when the case has one, the JSON Schema
// of its input (numbers as json.Number).
type Tool struct {
	Name   string `json:"name"`
	Schema any    `json:"schema,omitempty"`
}

// Event is a provider-neutral event, the unit of the events level (docs/PROTOCOL.md,
// "Units, per level"). Type says which fields are set.
type Event struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`     // text_delta
	Index    uint32 `json:"index"`              // call_start, args_delta, call_stop, foreign_*
	CallID   string `json:"call_id,omitempty"`  // call_start
	Name     string `json:"name,omitempty"`     // call_start, foreign_start
	Fragment string `json:"fragment,omitempty"` // args_delta, foreign_delta
	// Arguments: call_stop's whole argument string (Responses' done), when the dialect has one.
	Arguments *string `json:"arguments,omitempty"`
	Reason    string  `json:"reason,omitempty"`  // stop
	Message   string  `json:"message,omitempty"` // error
	Kind      string  `json:"kind,omitempty"`    // foreign_start, foreign_delta
	ID        string  `json:"id,omitempty"`      // foreign_start
	Content   string  `json:"content,omitempty"` // foreign_start
}

// WireEvent is an SSE event of the configured dialect, the unit of the wire level. Event and
// ID are nil when the SSE event has none; Data is its data lines joined with "\n". A dialect
// with a binary framing (bedrock) sends frames instead, in Headers and Payload.
type WireEvent struct {
	Event   *string           `json:"event"`
	Data    string            `json:"data"`
	ID      *string           `json:"id"`
	Headers [][2]string       `json:"headers,omitempty"`
	Payload map[string]string `json:"payload,omitempty"`
}

// Accumulator is what a factory makes, once per stream. Feed gets each unit (an Event, a
// WireEvent or the bytes of a transport chunk), Finish the stream's end. Report through out;
// return a *TurnError (Turn, Malformed) to fail the turn, a *SkipError (Skip) to skip the
// case; any other error, or a panic, is recorded as the stream's crash.
type Accumulator[U any] interface {
	Feed(unit U, out *Emit) error
	Finish(end End, out *Emit) error
}

// Factory makes a fresh accumulator for one stream.
type Factory[U any] func(tools []Tool, config Config) (Accumulator[U], error)

// Outcome is one call's outcome: make it with Dispatchable, SchemaError or Failed.
type Outcome struct {
	Kind   string // dispatchable, schema_error or failed
	Reason string // failed: abandoned, truncated or unparseable
	CallID string
	Name   string
	Args   any      // dispatchable, schema_error: the parsed arguments
	Errors []string // schema_error
	Raw    string   // failed: the buffer as received
}

// Dispatchable: the call finished in a complete turn and its arguments parsed (and meet its
// schema). args should come from Parse (numbers as written).
func Dispatchable(callID, name string, args any) Outcome {
	return Outcome{Kind: "dispatchable", CallID: callID, Name: name, Args: args}
}

// SchemaError: the arguments parsed but violate the tool's schema (schema profile only).
func SchemaError(callID, name string, args any, errors []string) Outcome {
	return Outcome{Kind: "schema_error", CallID: callID, Name: name, Args: args, Errors: errors}
}

// Failed: nothing to run. reason is abandoned, truncated or unparseable; raw is the buffer
// as received.
func Failed(reason, callID, name, raw string) Outcome {
	return Outcome{Kind: "failed", Reason: reason, CallID: callID, Name: name, Raw: raw}
}

func (o Outcome) wire(units int, atFinish bool) (map[string]any, error) {
	m := map[string]any{"outcome": o.Kind, "call_id": o.CallID, "name": o.Name, "units": units, "at_finish": atFinish}
	switch o.Kind {
	case "dispatchable":
		m["args"] = o.Args
	case "schema_error":
		m["args"] = o.Args
		m["errors"] = append([]string{}, o.Errors...)
	case "failed":
		if o.Reason != "abandoned" && o.Reason != "truncated" && o.Reason != "unparseable" {
			return nil, fmt.Errorf("%q is not a failure reason (abandoned, truncated, unparseable)", o.Reason)
		}
		m["reason"] = o.Reason
		m["raw"] = o.Raw
	default:
		return nil, fmt.Errorf("%q is not an outcome (make one with Dispatchable, SchemaError or Failed)", o.Kind)
	}
	return m, nil
}

// Slot is one slot of the assembled message's layout: Slot "text" with Text, or "call" with
// CallID.
type Slot struct {
	Slot   string `json:"slot"`
	Text   string `json:"text,omitempty"`
	CallID string `json:"call_id,omitempty"`
}

// MarshalJSON writes a text slot's text even when it is empty (an empty text block is a
// slot too) and a call slot's id.
func (s Slot) MarshalJSON() ([]byte, error) {
	if s.Slot == "text" {
		return Marshal(map[string]any{"slot": s.Slot, "text": s.Text})
	}
	return Marshal(map[string]any{"slot": s.Slot, "call_id": s.CallID})
}

// Emit is where an accumulator reports. Everything is stamped with the number of the
// stream's units delivered when it was emitted (counting the unit being handled) and
// whether it came from Finish.
type Emit struct {
	units    int
	atFinish bool
	outcomes []map[string]any
	text     strings.Builder
	layout   []Slot
	ending   map[string]any
	err      error // the first invalid report: the stream's crash
}

// Outcome reports one call's outcome.
func (e *Emit) Outcome(o Outcome) {
	m, err := o.wire(e.units, e.atFinish)
	if err != nil {
		if e.err == nil {
			e.err = err
		}
		return
	}
	e.outcomes = append(e.outcomes, m)
}

// Text reports a piece of prose, as it arrives.
func (e *Emit) Text(s string) { e.text.WriteString(s) }

// Layout reports (optionally) the assembled message's slots in order, so block order can be
// checked.
func (e *Emit) Layout(slots []Slot) { e.layout = append([]Slot{}, slots...) }

// Ending reports (optionally) how the turn ended, as your library tells its caller: ending
// one of Endings, stopReason the stop reason as the provider spelled it, "" when the stream
// carried none (never made up for a stream that simply stopped). Judged by ACC-ENDING; not
// calling it leaves that rule n/a.
func (e *Emit) Ending(ending, stopReason string) {
	if !slices.Contains(Endings, ending) {
		if e.err == nil {
			e.err = fmt.Errorf("%q is not an ending (one of %s)", ending, strings.Join(Endings, ", "))
		}
		return
	}
	var reason any
	if stopReason != "" {
		reason = stopReason
	}
	e.ending = map[string]any{"ending": ending, "stop_reason": reason, "units": e.units, "at_finish": e.atFinish}
}

// Units is the number of the stream's units delivered so far.
func (e *Emit) Units() int { return e.units }

// SetStamp sets the stamp of what is emitted next. For adapters that run a library only at
// the stream's end (an SDK reading a recorded body) and know how far it had read when it
// failed; units may not exceed the stream's unit count.
func (e *Emit) SetStamp(units int, atFinish bool) { e.units, e.atFinish = units, atFinish }

type request struct {
	Cmd     string          `json:"cmd"`
	Version json.RawMessage `json:"version"`
	Seq     json.RawMessage `json:"seq"`
	Level   string          `json:"level"`
	Dialect string          `json:"dialect"`
	Quirks  map[string]bool `json:"quirks"`
	Profile struct {
		Schema *bool `json:"schema"`
		Memory bool  `json:"memory"`
	} `json:"profile"`
	Case *Case `json:"case"`
}

// Case is a run request's case: its streams and the delivery order.
type Case struct {
	Streams []Stream `json:"streams"`
	Order   [][2]int `json:"order"`
}

// Stream is one stream of a case: its tools, its units at the configured level, its end.
type Stream struct {
	Tools []Tool            `json:"tools"`
	Units []json.RawMessage `json:"units"`
	End   End               `json:"end"`
}

// Implementation is what the handshake declares.
type Implementation struct {
	Name     string
	Version  string
	Homepage string
	// Language defaults to "go".
	Language string
	// Dialects the wire and bytes levels speak (default: Dialects).
	Dialects []string
	// Quirks: the server profiles' wire behaviours the decoders read (names from Quirks;
	// Quirks itself when you hand the bytes to an SDK).
	Quirks []string
	// Schema: the accumulator validates arguments against the tool's schema.
	Schema bool
	// Caps: the limits the SDK documents, by name (from Caps), each a non-negative count
	// (e.g. {"calls": 128, "depth": 128}). Left out of the handshake when empty.
	Caps map[string]int
	// Extra: more free fields of the handshake's implementation object (e.g.
	// {"policy": "documented"}).
	Extra map[string]any
}

// Server is an adapter: its implementation and one factory per level it can be fed at (at
// least one).
type Server struct {
	Implementation
	Events Factory[Event]
	Wire   Factory[WireEvent]
	Bytes  Factory[[]byte]
}

func (s *Server) levels() []string {
	var out []string
	if s.Events != nil {
		out = append(out, LevelEvents)
	}
	if s.Wire != nil {
		out = append(out, LevelWire)
	}
	if s.Bytes != nil {
		out = append(out, LevelBytes)
	}
	return out
}

func (s *Server) check() error {
	if len(s.levels()) == 0 {
		return errors.New("a Server needs a factory for at least one level (Events, Wire or Bytes)")
	}
	if s.Name == "" {
		return errors.New("a Server needs a Name")
	}
	for _, q := range s.Quirks {
		if !slices.Contains(Quirks, q) {
			return fmt.Errorf("unknown quirk %q (one of %s)", q, strings.Join(Quirks, ", "))
		}
	}
	for c, n := range s.Caps {
		if !slices.Contains(Caps, c) {
			return fmt.Errorf("unknown cap %q (one of %s)", c, strings.Join(Caps, ", "))
		}
		if n < 0 {
			return fmt.Errorf("cap %q must be a non-negative integer, not %d", c, n)
		}
	}
	for _, d := range s.dialects() {
		if !slices.Contains(Dialects, d) && !slices.Contains(BytesOnlyDialects, d) {
			return fmt.Errorf("unknown dialect %q (one of %s)", d, strings.Join(append(slices.Clone(Dialects), BytesOnlyDialects...), ", "))
		}
	}
	return nil
}

func (s *Server) dialects() []string {
	if s.Dialects == nil {
		return Dialects
	}
	return s.Dialects
}

func (s *Server) implementation() map[string]any {
	m := map[string]any{}
	for k, v := range s.Extra {
		m[k] = v
	}
	lang := s.Language
	if lang == "" {
		lang = "go"
	}
	caps := []string{}
	if s.Schema {
		caps = append(caps, "schema")
	}
	quirks := append([]string{}, s.Quirks...)
	m["name"] = s.Name
	m["language"] = lang
	m["language_version"] = strings.TrimPrefix(runtime.Version(), "go")
	m["levels"] = s.levels()
	m["dialects"] = s.dialects()
	m["quirks"] = quirks
	m["capabilities"] = caps
	if s.Version != "" {
		m["version"] = s.Version
	}
	if s.Homepage != "" {
		m["homepage"] = s.Homepage
	}
	if len(s.Caps) > 0 {
		m["caps"] = s.Caps
	}
	return m
}

// Main serves toolcert's requests on stdin and stdout until `stop` or the end of stdin, then
// exits. os.Stdout is pointed at stderr first: stdout is the protocol channel only, so a
// library that prints does not break the protocol.
func Main(s Server) {
	proto := os.Stdout
	os.Stdout = os.Stderr
	if err := s.Serve(os.Stdin, proto); err != nil {
		fmt.Fprintln(os.Stderr, "toolcert adapter:", err)
		os.Exit(2)
	}
	os.Exit(0)
}

// Serve answers toolcert's requests read from r, writing replies to w, until `stop` or the
// end of r. It returns an error only when the Server is misdeclared or r or w fail.
func (s *Server) Serve(r io.Reader, w io.Writer) error {
	if err := s.check(); err != nil {
		return err
	}
	in := bufio.NewReaderSize(r, 1<<16)
	out := bufio.NewWriter(w)
	send := func(v any) error {
		b, err := Marshal(v)
		if err != nil {
			// What the accumulator reported cannot be written (a NaN among its args):
			// the reply says so instead of breaking the protocol.
			b, err = Marshal(map[string]any{"errored": true, "context": map[string]any{"message": "the reply cannot be written as JSON: " + err.Error()}})
			if err != nil {
				return err
			}
		}
		if _, err := out.Write(append(b, '\n')); err != nil {
			return err
		}
		return out.Flush()
	}
	config := Config{Level: LevelEvents, Dialect: "anthropic", Quirks: map[string]bool{}}
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			stop, werr := s.handle(line, &config, send)
			if werr != nil {
				return werr
			}
			if stop {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (s *Server) handle(line []byte, config *Config, send func(any) error) (stop bool, err error) {
	var req request
	dec := json.NewDecoder(bytes.NewReader(line))
	// Tool schemas' bounds and enums are read exactly, as the arguments they are compared
	// with are.
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		fmt.Fprintf(os.Stderr, "toolcert adapter: unreadable request: %v\n", err)
		return false, send(map[string]any{"seq": nil, "errored": true, "context": map[string]any{"message": "unreadable request: " + err.Error()}})
	}
	switch req.Cmd {
	case "start":
		if string(req.Version) != fmt.Sprint(ProtocolVersion) {
			fmt.Fprintf(os.Stderr, "toolcert speaks protocol %s, this adapter %d\n", req.Version, ProtocolVersion)
		}
		return false, send(map[string]any{"version": ProtocolVersion, "implementation": s.implementation()})
	case "configure":
		if !slices.Contains(s.levels(), req.Level) {
			return false, send(map[string]any{"ok": false, "reason": fmt.Sprintf("level %q is not supported", req.Level)})
		}
		if req.Level != LevelEvents && !slices.Contains(s.dialects(), req.Dialect) {
			return false, send(map[string]any{"ok": false, "reason": fmt.Sprintf("dialect %q is not supported", req.Dialect)})
		}
		quirks := req.Quirks
		if quirks == nil {
			quirks = map[string]bool{}
		}
		*config = Config{Level: req.Level, Dialect: req.Dialect, Quirks: quirks,
			Schema: s.Schema && (req.Profile.Schema == nil || *req.Profile.Schema), Memory: req.Profile.Memory}
		return false, send(map[string]any{"ok": true})
	case "run":
		seq := req.Seq
		if seq == nil {
			seq = json.RawMessage("null")
		}
		if req.Case == nil {
			return false, send(map[string]any{"seq": seq, "errored": true, "context": map[string]any{"message": "a run request without a case"}})
		}
		var mem *heapPeak
		if config.Memory {
			mem = newHeapPeak() // before the clock starts: its collection is not the subject's time
		}
		started := cpuTime()
		results, err := s.runCase(req.Case, *config, mem)
		// At least 1 ns, as the Node package sends: a run too short for the clock still ran.
		elapsed := max(1, cpuTime()-started)
		var skip *SkipError
		switch {
		case errors.As(err, &skip):
			return false, send(map[string]any{"seq": seq, "skipped": true, "reason": skip.Reason})
		case err != nil:
			return false, send(map[string]any{"seq": seq, "errored": true, "context": map[string]any{"message": err.Error()}})
		}
		reply := map[string]any{"seq": seq, "results": results, "elapsed_ns": elapsed}
		if mem != nil {
			reply["peak_bytes"] = mem.bytes()
		}
		return false, send(reply)
	case "stop":
		return true, nil
	default:
		fmt.Fprintf(os.Stderr, "toolcert adapter: unknown command %q\n", req.Cmd)
		return false, send(map[string]any{"seq": req.Seq, "errored": true, "context": map[string]any{"message": fmt.Sprintf("unknown command %q", req.Cmd)}})
	}
}

// stepper is one stream's accumulator, whatever its level.
type stepper interface {
	feed(raw json.RawMessage, out *Emit) error
	finish(end End, out *Emit) error
}

type levelStepper[U any] struct {
	acc    Accumulator[U]
	decode func(json.RawMessage) (U, error)
}

func (l levelStepper[U]) feed(raw json.RawMessage, out *Emit) error {
	u, err := l.decode(raw)
	if err != nil {
		return fmt.Errorf("the adapter could not read a unit: %w", err)
	}
	return l.acc.Feed(u, out)
}

func (l levelStepper[U]) finish(end End, out *Emit) error { return l.acc.Finish(end, out) }

func decodeEvent(raw json.RawMessage) (Event, error) {
	var e Event
	err := json.Unmarshal(raw, &e)
	return e, err
}

func decodeWire(raw json.RawMessage) (WireEvent, error) {
	var e WireEvent
	err := json.Unmarshal(raw, &e)
	return e, err
}

// decodeChunk: a chunk is {"text"} when its bytes are UTF-8, otherwise {"bytes": base64}.
func decodeChunk(raw json.RawMessage) ([]byte, error) {
	var c struct {
		Text  *string `json:"text"`
		Bytes *string `json:"bytes"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	if c.Text != nil {
		return []byte(*c.Text), nil
	}
	if c.Bytes != nil {
		return base64.StdEncoding.Strict().DecodeString(*c.Bytes)
	}
	return nil, errors.New("a bytes unit with neither text nor bytes")
}

func (s *Server) make(tools []Tool, config Config) (stepper, error) {
	switch config.Level {
	case LevelEvents:
		acc, err := s.Events(tools, config)
		if err != nil || acc == nil {
			return nil, nilAcc(err)
		}
		return levelStepper[Event]{acc, decodeEvent}, nil
	case LevelWire:
		acc, err := s.Wire(tools, config)
		if err != nil || acc == nil {
			return nil, nilAcc(err)
		}
		return levelStepper[WireEvent]{acc, decodeWire}, nil
	case LevelBytes:
		acc, err := s.Bytes(tools, config)
		if err != nil || acc == nil {
			return nil, nilAcc(err)
		}
		return levelStepper[[]byte]{acc, decodeChunk}, nil
	}
	return nil, fmt.Errorf("level %q is not supported", config.Level)
}

func nilAcc(err error) error {
	if err == nil {
		return errors.New("the factory returned no accumulator")
	}
	return err
}

// guard runs f, turning a panic into an error that carries the stack: a crash.
func guard(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return f()
}

// RunCase feeds every stream of c to its own fresh accumulator, step by step in the case's
// order: [s, k] delivers unit k of stream s; [s, len(units)] ends stream s. A turn error
// ends a stream (nothing more is fed, Finish is not called); any other error or a panic is
// the stream's crash. It returns one result per stream, or a *SkipError.
func (s *Server) RunCase(c *Case, config Config) ([]map[string]any, error) {
	return s.runCase(c, config, nil)
}

// runCase is RunCase, sampling the heap into mem when it is not nil.
func (s *Server) runCase(c *Case, config Config, mem *heapPeak) ([]map[string]any, error) {
	n := len(c.Streams)
	accs := make([]stepper, n)
	emits := make([]*Emit, n)
	results := make([]map[string]any, n)
	var skip *SkipError
	for i, st := range c.Streams {
		emits[i] = &Emit{}
		results[i] = map[string]any{}
		tools := st.Tools
		if tools == nil {
			tools = []Tool{}
		}
		var acc stepper
		err := guard(func() (err error) { acc, err = s.make(tools, config); return })
		if errors.As(err, &skip) {
			return nil, skip
		}
		if err != nil {
			results[i]["crash"] = err.Error()
			continue
		}
		accs[i] = acc
	}
	for _, step := range c.Order {
		mem.step()
		si, k := step[0], step[1]
		if si < 0 || si >= n {
			return nil, fmt.Errorf("the order names stream %d of %d", si, n)
		}
		acc := accs[si]
		if acc == nil {
			continue
		}
		out := emits[si]
		units := c.Streams[si].Units
		var err error
		if k < len(units) {
			out.units++
			err = guard(func() error { return acc.feed(units[k], out) })
		} else {
			out.atFinish = true
			accs[si] = nil
			end := c.Streams[si].End
			if end == "" {
				end = EndEOF
			}
			err = guard(func() error { return acc.finish(end, out) })
			mem.now()
		}
		if err == nil && out.err != nil {
			err = out.err
		}
		if err == nil {
			continue
		}
		accs[si] = nil
		var turn *TurnError
		switch {
		case errors.As(err, &skip):
			return nil, skip
		case errors.As(err, &turn):
			results[si]["error"] = map[string]any{"class": turn.Class, "detail": turn.Detail, "units": out.units, "at_finish": out.atFinish}
		default:
			results[si]["crash"] = err.Error()
		}
	}
	for i, out := range emits {
		outcomes := out.outcomes
		if outcomes == nil {
			outcomes = []map[string]any{}
		}
		results[i]["outcomes"] = outcomes
		results[i]["text"] = out.text.String()
		if out.layout != nil {
			results[i]["layout"] = out.layout
		}
		if out.ending != nil {
			results[i]["ending"] = out.ending
		}
	}
	// The results included: a subject's output is its own (as the Python package counts it).
	mem.now()
	return results, nil
}
