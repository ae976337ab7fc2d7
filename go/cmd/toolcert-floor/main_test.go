package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// The floor declares every level, and dispatches a call whose arguments come in two
// fragments, with elapsed_ns (toolcert bench refuses a subject without it).
func TestFloorDispatchesATwoFragmentCall(t *testing.T) {
	requests := strings.Join([]string{
		`{"cmd":"start","version":1,"toolcert":"0.1.0"}`,
		`{"cmd":"configure","level":"events","dialect":"anthropic","quirks":{"chat_index_zero":false}}`,
		`{"cmd":"run","seq":1,"case":{"streams":[{"units":[` +
			`{"type":"call_start","index":0,"call_id":"c1","name":"f"},` +
			`{"type":"args_delta","index":0,"fragment":"{\"order_id\": \"A-44"},` +
			`{"type":"args_delta","index":0,"fragment":"71\", \"n\": 1.0}"},` +
			`{"type":"call_stop","index":0},{"type":"stop","reason":"tool_use"}],"end":"eof"}],` +
			`"order":[[0,0],[0,1],[0,2],[0,3],[0,4],[0,5]]}}`,
		`{"cmd":"stop"}`,
	}, "\n") + "\n"
	var out strings.Builder
	s := floor()
	if err := s.Serve(strings.NewReader(requests), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d replies:\n%s", len(lines), out.String())
	}
	var start struct {
		Implementation struct {
			Name   string   `json:"name"`
			Levels []string `json:"levels"`
		} `json:"implementation"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &start); err != nil {
		t.Fatal(err)
	}
	if start.Implementation.Name != "toolcert-adapter-floor" || strings.Join(start.Implementation.Levels, " ") != "events wire bytes" {
		t.Errorf("start reply: %s", lines[0])
	}
	var run struct {
		Results []struct {
			Outcomes []struct {
				Outcome string          `json:"outcome"`
				CallID  string          `json:"call_id"`
				Args    json.RawMessage `json:"args"`
			} `json:"outcomes"`
		} `json:"results"`
		ElapsedNs *int64 `json:"elapsed_ns"`
	}
	if err := json.Unmarshal([]byte(lines[2]), &run); err != nil {
		t.Fatal(err)
	}
	if len(run.Results) != 1 || len(run.Results[0].Outcomes) != 1 {
		t.Fatalf("run reply: %s", lines[2])
	}
	o := run.Results[0].Outcomes[0]
	// The number as written (1.0 stays 1.0); the keys as the module writes maps, sorted.
	if o.Outcome != "dispatchable" || o.CallID != "c1" || string(o.Args) != `{"n":1.0,"order_id":"A-4471"}` {
		t.Errorf("outcome: %s", lines[2])
	}
	if run.ElapsedNs == nil || *run.ElapsedNs < 1 {
		t.Errorf("elapsed_ns: want at least 1: %s", lines[2])
	}
}
