package toolcert

import (
	"bufio"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

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
	s := Server{Implementation: Implementation{Name: "core", Version: "1.2", Quirks: []string{"chat_index_zero"}}, Events: NewCore}
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
	want := `{"ending":{"at_finish":true,"ending":"complete","stop_reason":"tool_use","units":5},` +
		`"layout":[{"call_id":"c1","slot":"call"}],` +
		`"outcomes":[{"args":{"big":12345678901234567890,"n":1.0},"at_finish":true,"call_id":"c1","name":"f","outcome":"dispatchable","units":5}],"text":""}`
	if first != want {
		t.Errorf("stream 0:\n got %s\nwant %s", first, want)
	}
	// The turn error stops the stream: its third unit and its end are never fed.
	second := j(results[1])
	want = `{"error":{"at_finish":false,"class":"unannounced_index","detail":"fragment for unannounced index 4","units":2},"outcomes":[],"text":"hi"}`
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
		"no level":     {Implementation: Implementation{Name: "x"}},
		"no name":      {Events: NewCore},
		"bad quirk":    {Implementation: Implementation{Name: "x", Quirks: []string{"chat_whatever"}}, Events: NewCore},
		"bad dialect":  {Implementation: Implementation{Name: "x", Dialects: []string{"gemini"}}, Events: NewCore},
		"bad cap":      {Implementation: Implementation{Name: "x", Caps: map[string]int{"tools": 1}}, Events: NewCore},
		"negative cap": {Implementation: Implementation{Name: "x", Caps: map[string]int{"depth": -1}}, Events: NewCore},
	} {
		if err := s.Serve(strings.NewReader(""), &strings.Builder{}); err == nil {
			t.Errorf("%s: served", name)
		}
	}
}

func TestCapsAreDeclaredOnlyWhenGivenAndLimitIsATurnError(t *testing.T) {
	plain := converse(t, Server{Implementation: Implementation{Name: "x"}, Events: NewCore}, `{"cmd":"start","version":1}`)
	if _, ok := plain[0]["implementation"].(map[string]any)["caps"]; ok {
		t.Errorf("caps declared without Caps: %v", j(plain[0]))
	}
	s := Server{Implementation: Implementation{Name: "x", Dialects: []string{"openai-chat"},
		Caps: map[string]int{"calls": 128, "argument_bytes": 16777216, "fragments": 65536, "depth": 128}}}
	s.Bytes = func([]Tool, Config) (Accumulator[[]byte], error) {
		return scripted{func(*Emit) error { return Turn("limit", "past the cap") }, func(*Emit) error { return nil }}, nil
	}
	replies := converse(t, s,
		`{"cmd":"start","version":1}`,
		`{"cmd":"configure","level":"bytes","dialect":"openai-chat"}`,
		`{"cmd":"run","seq":1,"case":{"streams":[{"units":[{"text":"x"}],"end":"eof"}],"order":[[0,0],[0,1]]}}`,
	)
	if got := j(replies[0]["implementation"].(map[string]any)["caps"]); got != `{"argument_bytes":16777216,"calls":128,"depth":128,"fragments":65536}` {
		t.Errorf("caps: %s", got)
	}
	want := `[{"error":{"at_finish":false,"class":"limit","detail":"past the cap","units":1},"outcomes":[],"text":""}]`
	if got := j(replies[2]["results"]); got != want {
		t.Errorf("a limit turn error:\n got %s\nwant %s", got, want)
	}
}

func TestPeakBytesOnlyWhenMemoryIsAskedFor(t *testing.T) {
	// Each stream's finish emits 8 MiB of text, which its result keeps: the peak covers it.
	s := Server{Implementation: Implementation{Name: "x", Dialects: []string{"openai-chat"}}}
	s.Bytes = func([]Tool, Config) (Accumulator[[]byte], error) {
		return scripted{func(*Emit) error { return nil }, func(out *Emit) error {
			out.Text(strings.Repeat("x", 8<<20))
			return nil
		}}, nil
	}
	run := `{"cmd":"run","seq":1,"case":{"streams":[{"units":[{"text":"x"}],"end":"eof"}],"order":[[0,0],[0,1]]}}`
	replies := converse(t, s,
		`{"cmd":"configure","level":"bytes","dialect":"openai-chat","profile":{"memory":true}}`, run,
		`{"cmd":"configure","level":"bytes","dialect":"openai-chat","profile":{"schema":true}}`, run,
	)
	peak, ok := replies[1]["peak_bytes"].(json.Number)
	if !ok {
		t.Fatalf("no peak_bytes with memory asked for: %.200s", j(replies[1]))
	}
	// A non-negative integer; the 8 MiB kept with some slack for what the run freed.
	if n, err := strconv.ParseUint(string(peak), 10, 64); err != nil || n < 4<<20 {
		t.Errorf("peak_bytes %s: want an integer of at least 4 MiB (%v)", peak, err)
	}
	if _, ok := replies[3]["peak_bytes"]; ok || replies[3]["results"] == nil {
		t.Errorf("peak_bytes without memory asked for: %.200s", j(replies[3]))
	}
}
