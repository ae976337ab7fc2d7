// Package harness is the shared plumbing of the Go SDK adapters (examples/sdks/go), on the
// toolcert Go package (go/): its protocol loop at the bytes level and its strict JSON, plus
// what only a real SDK needs: an exact-bytes transport, the caller policy, and the mapping of
// what an SDK hands its caller onto outcomes. Each adapter (cmd/NAME) implements Adapter and
// calls Main.
//
// How a stream is run: the harness delivers a stream's transport chunks one by one, then its
// end. A real SDK pulls its bytes from an HTTP response and hands results once the stream is
// over, so the adapter collects the chunks and, at the stream's end, runs the SDK over them
// in one go: the SDK's http.Client gets a RoundTripper (Transport) whose response body yields
// exactly those chunks, in order, unchanged, one chunk per Read at most. The SDK pulls them
// itself, so it sees every chunk boundary the harness made.
//
// How the body ends (the stream's end):
//
//	eof         Read returns io.EOF: the server closed the stream;
//	disconnect  Read past the last chunk returns io.ErrUnexpectedEOF, what net/http returns
//	            when a connection drops inside a chunked or sized body;
//	cancel      Read past the last chunk returns context.Canceled, what a body read returns
//	            once the caller cancelled the request's context.
//
// The caller policy (docs/CERTIFICATION.md, "Caller policies"): `--policy as-handed-over`
// (the default, or TOOLCERT_POLICY) dispatches every call the SDK's final result offers
// unless the SDK raised or marked that very call; `--policy documented` also makes the check
// the SDK's documentation tells a caller to make before running tools (stop_reason,
// finish_reason, response status): when it says the turn was cut every call is
// failed(truncated), when it is missing or says the response never finished,
// failed(abandoned).
//
// Mapping onto outcomes: a call of the final result is dispatchable with exactly the input
// the SDK hands over. The Go SDKs hand the arguments as text (a string, or a
// json.RawMessage), which the caller must parse: the adapter parses it strictly (the
// package's Parse: RFC 8259, numbers kept as written), so parsing is never the finding; text
// that is not one JSON document is failed(unparseable) with the text as raw; "" is {} (no
// argument bytes, docs/SPEC.md section 2). An error the SDK returned is a turn error:
// `incomplete` for the dropped connection or the cancel the adapter made, `upstream` for the
// SDK's error for an error event, `malformed` for undecodable data, `other` otherwise (each
// adapter's Classify). Outcomes are stamped with the stream's unit count and at_finish (they
// are handed over once the body ended); a turn error with the chunks the SDK had pulled when
// it failed. A panic, in the SDK or the adapter, is the stream's crash (SUBJECT-CRASH), with
// its stack.
package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	toolcert "github.com/toolcert/toolcert/go"
)

// Policies are the caller policies (docs/CERTIFICATION.md).
var Policies = []string{"as-handed-over", "documented"}

// PolicyFrom reads `--policy NAME` from args, else TOOLCERT_POLICY, else as-handed-over.
func PolicyFrom(args []string) (string, error) {
	policy := os.Getenv("TOOLCERT_POLICY")
	if policy == "" {
		policy = "as-handed-over"
	}
	for i, a := range args {
		if a == "--policy" {
			policy = ""
			if i+1 < len(args) {
				policy = args[i+1]
			}
		} else if v, ok := strings.CutPrefix(a, "--policy="); ok {
			policy = v
		}
	}
	for _, p := range Policies {
		if p == policy {
			return policy, nil
		}
	}
	return "", fmt.Errorf("unknown caller policy %q (one of %s)", policy, strings.Join(Policies, ", "))
}

// What the turn's stop signal says, for the documented policy.
const (
	Complete   = "complete"
	Cut        = "truncated"
	Unfinished = "abandoned"
)

// StopSignal reads a stop reason / finish reason / status: Complete, Cut, or Unfinished
// (missing, or a value a caller cannot read as either: it does not run the calls).
func StopSignal(value string, complete, cut []string) string {
	for _, c := range complete {
		if value == c {
			return Complete
		}
	}
	for _, c := range cut {
		if value == c {
			return Cut
		}
	}
	return Unfinished
}

// The stop signals of each dialect (docs/SPEC.md section 2).
var (
	AnthropicComplete = []string{"tool_use", "end_turn", "stop_sequence", "pause_turn"}
	AnthropicCut      = []string{"max_tokens", "refusal", "model_context_window_exceeded"}
	ChatComplete      = []string{"tool_calls", "stop", "function_call"}
	ChatCut           = []string{"length", "content_filter"}
	ResponsesComplete = []string{"completed"}
	ResponsesCut      = []string{"incomplete"}
)

// Call is one call as the SDK handed it over.
type Call struct {
	CallID, Name string
	Unparseable  bool   // the caller could not parse the argument text
	Args         any    // the arguments (Parse's values), when parsed
	Raw          string // the SDK's argument text
	// Flag, when the SDK itself marked the call (an item status): failed with this reason
	// whatever the policy.
	Flag string
}

// FromArgumentText is a call whose SDK hands the arguments as text: the caller parses them
// strictly. Any one JSON document is offered for dispatch as written, an object or not
// (docs/SPEC.md: without a schema the dispatcher decides); "" is {}.
func FromArgumentText(callID, name, text string) Call {
	if text == "" {
		return Call{CallID: callID, Name: name, Args: map[string]any{}, Raw: text}
	}
	v, err := toolcert.ParseString(text)
	if err != nil {
		return Call{CallID: callID, Name: name, Unparseable: true, Raw: text}
	}
	return Call{CallID: callID, Name: name, Args: v, Raw: text}
}

// Outcome is what one stream gave the caller.
type Outcome struct {
	Calls  []Call
	Text   string
	Layout []toolcert.Slot // nil: no layout
	// Stop: what the SDK's stop signal says (Complete, Cut, Unfinished), for the documented
	// policy; "" is Unfinished.
	Stop string
	// Err: the error the SDK returned, which ended the turn (Classify gives its class).
	Err error
}

// Feed is one stream's chunks and end, handed to the SDK as a response body. It counts
// what the SDK pulled.
type Feed struct {
	chunks [][]byte
	end    toolcert.End
	mu     sync.Mutex
	next   int    // the next chunk to hand out
	rest   []byte // what is left of the chunk being read
	pulled int    // chunks the SDK started reading
	ended  bool   // the SDK read past the last chunk
}

// NewFeed is a body of these chunks, ended as end says.
func NewFeed(chunks [][]byte, end toolcert.End) *Feed { return &Feed{chunks: chunks, end: end} }

// Read hands out at most one chunk (or what is left of it) per call.
func (f *Feed) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	for len(f.rest) == 0 {
		if f.next == len(f.chunks) {
			f.ended = true
			switch f.end {
			case toolcert.EndDisconnect:
				return 0, io.ErrUnexpectedEOF
			case toolcert.EndCancel:
				return 0, context.Canceled
			}
			return 0, io.EOF
		}
		f.rest = f.chunks[f.next]
		f.next++
		f.pulled++
	}
	n := copy(p, f.rest)
	f.rest = f.rest[n:]
	return n, nil
}

// Close: the SDK is done with the body.
func (f *Feed) Close() error { return nil }

// Stamp is the stamp of a turn error raised while this feed was read: the chunks pulled,
// and whether the SDK had read past the last one.
func (f *Feed) Stamp() (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pulled, f.ended
}

// Transport answers every request with the current feed, as a 200 text/event-stream
// response. Requests it did not expect fail.
type Transport struct {
	mu   sync.Mutex
	feed *Feed
	// Requests counts the requests answered.
	Requests int
}

// Set makes f the answer to the next request.
func (t *Transport) Set(f *Feed) {
	t.mu.Lock()
	t.feed = f
	t.mu.Unlock()
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	t.mu.Lock()
	feed := t.feed
	t.feed = nil
	t.Requests++
	t.mu.Unlock()
	if feed == nil {
		return nil, errors.New("the SDK made a request the adapter did not expect")
	}
	return &http.Response{
		Status:     "200 OK",
		StatusCode: http.StatusOK,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache"}},
		Body:          feed,
		ContentLength: -1,
		Request:       req,
	}, nil
}

// Client is an http.Client on t, for the SDKs that take one.
func (t *Transport) Client() *http.Client { return &http.Client{Transport: t} }

// Adapter is one SDK, driven at the bytes level.
type Adapter interface {
	// Implementation: name, version, homepage, dialects (Quirks and Extra are filled in).
	Implementation() toolcert.Implementation
	// Setup makes the client, on a transport that answers from t. Called once.
	Setup(t *Transport) error
	// Run makes one request (answered with the feed already set), consumes the stream and
	// reads the final result. The SDK's error goes in Outcome.Err.
	Run(ctx context.Context, tools []toolcert.Tool, dialect string) Outcome
	// Classify gives the turn error class of an error the SDK returned.
	Classify(err error) string
}

// PolicyDoc: where the SDK's documentation tells a caller what to check before running
// tools (the handshake's policy_doc), when an Adapter says.
type PolicyDoc interface{ PolicyDoc() string }

// TransportEnd: the error is the way the adapter ended the body (the dropped connection,
// the cancel), anywhere in its chain.
func TransportEnd(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.Canceled)
}

// ClassifyCommon: incomplete for the transport ends, malformed for undecodable JSON or
// invalid UTF-8, other otherwise.
func ClassifyCommon(err error) string {
	if TransportEnd(err) {
		return "incomplete"
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syntax) || errors.As(err, &typ) {
		return "malformed"
	}
	return "other"
}

// Plain turns a tool schema's json.Numbers into float64 or int64, so an SDK serializes it as
// a provider would receive it.
func Plain(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Plain(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Plain(e)
		}
		return out
	}
	return v
}

// UniqueTools: the stream's tools, each name once (a request cannot declare a name twice).
func UniqueTools(tools []toolcert.Tool) []toolcert.Tool {
	seen := map[string]bool{}
	var out []toolcert.Tool
	for _, t := range tools {
		if !seen[t.Name] {
			seen[t.Name] = true
			out = append(out, t)
		}
	}
	return out
}

// ObjectSchema is a tool's schema as a map, {"type": "object"} when it has none.
func ObjectSchema(t toolcert.Tool) map[string]any {
	if m, ok := Plain(t.Schema).(map[string]any); ok {
		return m
	}
	return map[string]any{"type": "object"}
}

type stream struct {
	h      *host
	tools  []toolcert.Tool
	dial   string
	chunks [][]byte
}

func (s *stream) Feed(chunk []byte, _ *toolcert.Emit) error {
	s.chunks = append(s.chunks, chunk)
	return nil
}

func (s *stream) Finish(end toolcert.End, out *toolcert.Emit) error {
	if err := s.h.ready(); err != nil {
		return err
	}
	feed := NewFeed(s.chunks, end)
	s.h.transport.Set(feed)
	var got Outcome
	func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		got = s.h.adapter.Run(ctx, s.tools, s.dial)
	}()
	s.h.transport.Set(nil)
	if got.Err != nil {
		units, atFinish := feed.Stamp()
		out.SetStamp(units, atFinish)
		out.Text(got.Text)
		detail := fmt.Sprintf("%T: %v", got.Err, got.Err)
		if len(detail) > 2000 {
			detail = detail[:2000]
		}
		return toolcert.Turn(s.h.adapter.Classify(got.Err), detail)
	}
	withheld := ""
	if s.h.policy == "documented" && got.Stop != Complete {
		withheld = Unfinished
		if got.Stop == Cut {
			withheld = Cut
		}
	}
	for _, c := range got.Calls {
		switch {
		case c.Flag != "":
			out.Outcome(toolcert.Failed(c.Flag, c.CallID, c.Name, c.Raw))
		case withheld != "":
			// A call the caller's check withholds is not run whatever its text.
			out.Outcome(toolcert.Failed(withheld, c.CallID, c.Name, c.Raw))
		case c.Unparseable:
			out.Outcome(toolcert.Failed("unparseable", c.CallID, c.Name, c.Raw))
		default:
			out.Outcome(toolcert.Dispatchable(c.CallID, c.Name, c.Args))
		}
	}
	if got.Layout != nil {
		out.Layout(got.Layout)
	}
	out.Text(got.Text)
	return nil
}

type host struct {
	adapter   Adapter
	policy    string
	transport *Transport
	once      sync.Once
	setupErr  error
}

func (h *host) ready() error {
	h.once.Do(func() {
		defer func() {
			if p := recover(); p != nil {
				h.setupErr = fmt.Errorf("panic in setup: %v\n%s", p, debug.Stack())
			}
		}()
		h.setupErr = h.adapter.Setup(h.transport)
	})
	if h.setupErr != nil {
		return fmt.Errorf("the SDK could not be set up: %w", h.setupErr)
	}
	return nil
}

// Main serves toolcert's requests with a, at the bytes level, under the caller policy of the
// command line (--policy) or TOOLCERT_POLICY.
func Main(a Adapter) {
	policy, err := PolicyFrom(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	h := &host{adapter: a, policy: policy, transport: &Transport{}}
	impl := a.Implementation()
	impl.Quirks = toolcert.Quirks // an SDK reads whatever bytes come: every server profile
	impl.Extra = map[string]any{"policy": policy}
	if d, ok := a.(PolicyDoc); ok {
		impl.Extra["policy_doc"] = d.PolicyDoc()
	}
	toolcert.Main(toolcert.Server{
		Implementation: impl,
		Bytes: func(tools []toolcert.Tool, config toolcert.Config) (toolcert.Accumulator[[]byte], error) {
			return &stream{h: h, tools: tools, dial: config.Dialect}, nil
		},
	})
}

// ModuleVersion is the version of a module in the adapter's build, for the handshake.
func ModuleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, m := range info.Deps {
		if m.Path == path {
			if m.Replace != nil {
				return m.Replace.Version
			}
			return m.Version
		}
	}
	return "unknown"
}
