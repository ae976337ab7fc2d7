package toolcert

import (
	"bufio"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// core is a small correct events-level accumulator, for the loop's tests and for the
// certification of this package's own loop (certify_test.go).
type core struct {
	schemas map[string]any // by tool name, when the schema profile is on
	calls   []*coreCall
	byIndex map[uint32]*coreCall
	stop    string
	errored bool
}

type coreCall struct {
	id, name string
	buf      strings.Builder
	closed   bool
}

func newCore(tools []Tool, config Config) (Accumulator[Event], error) {
	c := &core{byIndex: map[uint32]*coreCall{}, schemas: map[string]any{}}
	for _, t := range tools {
		if config.Schema && t.Schema != nil {
			c.schemas[t.Name] = t.Schema
		}
	}
	return c, nil
}

// dispatch: the call's outcome once its arguments parsed, judged by its tool's schema when
// there is one.
func (c *core) dispatch(call *coreCall, args any) Outcome {
	if schema, ok := c.schemas[call.name]; ok {
		if errs := SchemaErrors(schema, args); len(errs) > 0 {
			return SchemaError(call.id, call.name, args, errs)
		}
	}
	return Dispatchable(call.id, call.name, args)
}

func (c *core) open(i uint32) (*coreCall, error) {
	call, ok := c.byIndex[i]
	if !ok {
		return nil, Turn("unannounced_index", "no call at that index")
	}
	if call.closed || c.stop != "" {
		return nil, Turn("fragment_after_stop", "the call is closed")
	}
	return call, nil
}

func (c *core) Feed(e Event, out *Emit) error {
	switch e.Type {
	case "text_delta":
		out.Text(e.Text)
	case "call_start":
		if c.stop != "" {
			return Turn("fragment_after_stop", "a call after the stop")
		}
		if _, dup := c.byIndex[e.Index]; dup {
			return Turn("duplicate_announcement", "announced twice")
		}
		call := &coreCall{id: e.CallID, name: e.Name}
		c.byIndex[e.Index] = call
		c.calls = append(c.calls, call)
	case "args_delta":
		call, err := c.open(e.Index)
		if err != nil {
			return err
		}
		call.buf.WriteString(e.Fragment)
	case "call_stop":
		call, err := c.open(e.Index)
		if err != nil {
			return err
		}
		if e.Arguments != nil && *e.Arguments != call.buf.String() {
			return Turn("done_mismatch", "done differs from the deltas")
		}
		call.closed = true
	case "stop":
		if c.stop != "" {
			return Turn("fragment_after_stop", "a second stop")
		}
		c.stop = e.Reason
	case "error":
		// The stream ends; finish accounts for the live calls (abandoned).
		c.errored = true
	}
	return nil
}

func (c *core) Finish(end End, out *Emit) error {
	for _, call := range c.calls {
		raw := call.buf.String()
		switch {
		case c.stop == "" || c.errored || end != EndEOF && !call.closed:
			out.Outcome(Failed("abandoned", call.id, call.name, raw))
		case Truncating[c.stop]:
			out.Outcome(Failed("truncated", call.id, call.name, raw))
		case raw == "":
			out.Outcome(c.dispatch(call, map[string]any{}))
		default:
			if v, err := ParseString(raw); err == nil {
				out.Outcome(c.dispatch(call, v))
			} else {
				out.Outcome(Failed("unparseable", call.id, call.name, raw))
			}
		}
	}
	return nil
}

// converse serves the requests (one per line) and returns the replies, one per line.
func converse(t *testing.T, s Server, requests ...string) []map[string]any {
	t.Helper()
	var out strings.Builder
	if err := s.Serve(strings.NewReader(strings.Join(requests, "\n")+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	var replies []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("reply %q: %v", sc.Text(), err)
		}
		replies = append(replies, m)
	}
	return replies
}

func j(v any) string {
	b, _ := Marshal(v)
	return string(b)
}

const runTwoStreams = `{"cmd":"run","seq":7,"case":{"streams":[` +
	`{"tools":[{"name":"f","schema":{"type":"object","maximum":1.50}}],"units":[` +
	`{"type":"call_start","index":1,"call_id":"c1","name":"f"},` +
	`{"type":"args_delta","index":1,"fragment":"{\"n\": 1.0, \"big\": 12345678901234567890"},` +
	`{"type":"args_delta","index":1,"fragment":"}"},{"type":"call_stop","index":1},{"type":"stop","reason":"tool_use"}],"end":"eof"},` +
	`{"units":[{"type":"text_delta","text":"hi"},{"type":"args_delta","index":4,"fragment":"x"},{"type":"text_delta","text":"never"}],"end":"eof"}],` +
	`"order":[[0,0],[1,0],[0,1],[1,1],[0,2],[1,2],[0,3],[1,3],[0,4],[0,5]]}}`

func TestServeConversation(t *testing.T) {
	s := Server{Implementation: Implementation{Name: "core", Version: "1.2", Quirks: []string{"chat_index_zero"}}, Events: newCore}
	replies := converse(t, s,
		`{"cmd":"start","version":1,"toolcert":"0.1.0"}`,
		`{"cmd":"configure","level":"bytes","dialect":"anthropic","quirks":{}}`,
		`{"cmd":"configure","level":"events","dialect":"anthropic","quirks":{"chat_index_zero":false},"profile":{"schema":true}}`,
		runTwoStreams,
		`{"cmd":"stop"}`,
		`{"cmd":"run","seq":8,"case":{"streams":[],"order":[]}}`,
	)
	if len(replies) != 4 {
		t.Fatalf("%d replies: %v", len(replies), replies)
	}
	impl := replies[0]["implementation"].(map[string]any)
	if j(replies[0]["version"]) != "1" || impl["name"] != "core" || impl["language"] != "go" || impl["version"] != "1.2" ||
		j(impl["levels"]) != `["events"]` || j(impl["quirks"]) != `["chat_index_zero"]` || j(impl["capabilities"]) != `[]` {
		t.Errorf("start reply: %v", j(replies[0]))
	}
	if replies[1]["ok"] != false || !strings.Contains(replies[1]["reason"].(string), "bytes") {
		t.Errorf("configure at an undeclared level: %v", j(replies[1]))
	}
	if replies[2]["ok"] != true {
		t.Errorf("configure: %v", j(replies[2]))
	}
	run := replies[3]
	if j(run["seq"]) != "7" || run["elapsed_ns"] == nil {
		t.Errorf("run reply: %v", j(run))
	}
	results := run["results"].([]any)
	first := j(results[0])
	// The numbers as written; stamped with the 5 units delivered and the finish.
	want := `{"outcomes":[{"args":{"big":12345678901234567890,"n":1.0},"at_finish":true,"call_id":"c1","name":"f","outcome":"dispatchable","units":5}],"text":""}`
	if first != want {
		t.Errorf("stream 0:\n got %s\nwant %s", first, want)
	}
	// The turn error stops the stream: its third unit and its end are never fed.
	second := j(results[1])
	want = `{"error":{"at_finish":false,"class":"unannounced_index","detail":"no call at that index","units":2},"outcomes":[],"text":"hi"}`
	if second != want {
		t.Errorf("stream 1:\n got %s\nwant %s", second, want)
	}
}

type scripted struct {
	feed   func(out *Emit) error
	finish func(out *Emit) error
}

func (s scripted) Feed(_ []byte, out *Emit) error { return s.feed(out) }
func (s scripted) Finish(_ End, out *Emit) error  { return s.finish(out) }

func TestRunCaseCrashesSkipsAndBytes(t *testing.T) {
	var got [][]byte
	s := Server{Implementation: Implementation{Name: "x", Dialects: []string{"openai-chat"}}}
	mk := func(feed func(*Emit) error, finish func(*Emit) error) {
		s.Bytes = func([]Tool, Config) (Accumulator[[]byte], error) {
			return bytesRecorder{scripted{feed, finish}, &got}, nil
		}
	}
	config := Config{Level: LevelBytes, Dialect: "openai-chat"}
	c := &Case{Streams: []Stream{{Units: []json.RawMessage{json.RawMessage(`{"text":"da"}`), json.RawMessage(`{"bytes":"/+4="}`)}, End: EndDisconnect}}, Order: [][2]int{{0, 0}, {0, 1}, {0, 2}}}

	mk(func(*Emit) error { return nil }, func(out *Emit) error {
		out.Outcome(Failed("abandoned", "c", "f", "{"))
		out.Ending("abandoned", "")
		return nil
	})
	res, err := s.RunCase(c, config)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[0]) != "da" || string(got[1]) != "\xff\xee" {
		t.Errorf("bytes fed: %q", got)
	}
	if want := `[{"ending":{"at_finish":true,"ending":"abandoned","stop_reason":null,"units":2},"outcomes":[{"at_finish":true,"call_id":"c","name":"f","outcome":"failed","raw":"{","reason":"abandoned","units":2}],"text":""}]`; j(res) != want {
		t.Errorf("got %s", j(res))
	}

	mk(func(*Emit) error { panic("boom") }, func(*Emit) error { return nil })
	res, _ = s.RunCase(c, config)
	if crash, _ := res[0]["crash"].(string); !strings.Contains(crash, "boom") || !strings.Contains(crash, "goroutine") {
		t.Errorf("a panic is the stream's crash, with its stack: %v", res[0])
	}

	mk(func(*Emit) error { return Turn("no_such_class", "x") }, func(*Emit) error { return nil })
	res, _ = s.RunCase(c, config)
	if crash, _ := res[0]["crash"].(string); !strings.Contains(crash, "not a turn error class") {
		t.Errorf("an unknown class is a crash: %v", res[0])
	}

	mk(func(out *Emit) error { out.Outcome(Failed("lost", "c", "f", "")); return nil }, func(*Emit) error { return nil })
	res, _ = s.RunCase(c, config)
	if crash, _ := res[0]["crash"].(string); !strings.Contains(crash, "not a failure reason") {
		t.Errorf("an unknown failure reason is a crash: %v", res[0])
	}

	mk(func(*Emit) error { return Skip("no such thing") }, func(*Emit) error { return nil })
	var skip *SkipError
	if _, err := s.RunCase(c, config); !errors.As(err, &skip) || skip.Reason != "no such thing" {
		t.Errorf("skip: %v", err)
	}
}

type bytesRecorder struct {
	scripted
	got *[][]byte
}

func (b bytesRecorder) Feed(chunk []byte, out *Emit) error {
	*b.got = append(*b.got, chunk)
	return b.scripted.Feed(chunk, out)
}

func TestServerRefusesAMisdeclaration(t *testing.T) {
	for name, s := range map[string]Server{
		"no level":    {Implementation: Implementation{Name: "x"}},
		"no name":     {Events: newCore},
		"bad quirk":   {Implementation: Implementation{Name: "x", Quirks: []string{"chat_whatever"}}, Events: newCore},
		"bad dialect": {Implementation: Implementation{Name: "x", Dialects: []string{"gemini"}}, Events: newCore},
	} {
		if err := s.Serve(strings.NewReader(""), &strings.Builder{}); err == nil {
			t.Errorf("%s: served", name)
		}
	}
}
