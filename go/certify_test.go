package toolcert

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain doubles as an adapter: with TOOLCERT_GO_SELF=1 the test binary serves the
// reference accumulator (Core) at every level, through the reference decoders and the SSE
// decoder, so the loop, the decoders, Parse and SchemaErrors are certified by the real
// harness in every server profile.
func TestMain(m *testing.M) {
	if os.Getenv("TOOLCERT_GO_SELF") == "1" {
		Main(ReferenceServer(Implementation{Name: "toolcert-go reference", Schema: true, Quirks: Quirks}, NewCore))
	}
	os.Exit(m.Run())
}

func binaryOrSkip(t *testing.T) {
	if _, err := FindBinary(); err != nil {
		t.Skipf("no toolcert binary: %v", err)
	}
}

func TestTheLoopConformsUnderTheHarness(t *testing.T) {
	binaryOrSkip(t)
	// With the schema profile on: SchemaErrors is judged by the oracle too.
	report, err := Run("TOOLCERT_GO_SELF=1 exec "+shellQuote(os.Args[0]), Options{Cases: 300})
	if err != nil {
		t.Fatal(err)
	}
	if !report.Conforms() || report.ExitCode != 0 {
		t.Fatalf("the reference does not conform:\n%s", report.Summary())
	}
	// Every level, dialect and server profile the reference declares was run.
	settings, _ := report.JSON["settings"].([]any)
	seen := map[string]bool{}
	for _, x := range settings {
		m, _ := x.(map[string]any)
		level, _ := m["level"].(string)
		dialect, _ := m["dialect"].(string)
		seen[level+" "+dialect] = true
	}
	for _, want := range []string{"events ", "wire anthropic", "wire openai-chat", "wire openai-responses",
		"bytes anthropic", "bytes openai-chat", "bytes openai-responses"} {
		if !seen[want] {
			t.Errorf("the setting %q was not run (%d settings)", want, len(settings))
		}
	}
	schema := false
	for _, inv := range report.Invariants() {
		schema = schema || inv.ID == "ACC-SCHEMA" && inv.Status == "pass"
	}
	if !schema {
		t.Errorf("ACC-SCHEMA was not exercised: %v", report.Invariants())
	}
}

func TestFindingsCarryReproducerAndReplay(t *testing.T) {
	binaryOrSkip(t)
	report, err := Run("builtin:mutant/fragment-trim", Options{Cases: 100, NoSchema: true})
	if err != nil {
		t.Fatal(err)
	}
	if report.Conforms() || report.ExitCode != 1 || len(report.FindingsFor("ACC-FIDELITY")) == 0 {
		t.Fatalf("the trimming mutant: exit %d\n%s", report.ExitCode, report.Summary())
	}
	f := report.FindingsFor("ACC-FIDELITY")[0]
	if _, err := os.Stat(f.Reproducer); err != nil {
		t.Errorf("reproducer %q: %v", f.Reproducer, err)
	}
	if !strings.HasPrefix(f.Replay, "toolcert certify --subject builtin:mutant/fragment-trim ") || !strings.Contains(f.Replay, "--scenario") {
		t.Errorf("replay: %s", f.Replay)
	}
	// The replay line runs as printed and fails again.
	bin, _ := FindBinary()
	cmd := exec.Command("sh", "-c", `"$0" `+strings.TrimPrefix(f.Replay, "toolcert "), bin)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "ACC-FIDELITY") {
		t.Errorf("replay exited %v:\n%s", err, out)
	}
	for _, inv := range report.Invariants() {
		if inv.ID == "" || (inv.Status != "pass" && inv.Status != "fail" && inv.Status != "n/a") {
			t.Errorf("invariant %+v", inv)
		}
	}
}

func TestRunRefusals(t *testing.T) {
	binaryOrSkip(t)
	if _, err := Run("builtin:nope", Options{Cases: 1}); err == nil || !strings.Contains(err.Error(), "unknown subject") {
		t.Errorf("an unknown subject: %v", err)
	}
	t.Setenv("TOOLCERT_BIN", "/nonexistent/toolcert")
	if _, err := Run("builtin:reference", Options{}); err == nil || !strings.Contains(err.Error(), "TOOLCERT_BIN") {
		t.Errorf("a missing binary: %v", err)
	}
}

func TestShellQuoting(t *testing.T) {
	got := shellJoin([]string{"toolcert", "exec:go run ./a --x", "it's", "", "a/b.json"})
	if want := `toolcert 'exec:go run ./a --x' 'it'"'"'s' '' a/b.json`; got != want {
		t.Errorf("got %s", got)
	}
	if fileStem("named/deltas/é x") != "named_deltas___x" {
		t.Errorf("fileStem: %s", fileStem("named/deltas/é x"))
	}
}

func TestFindingsFromInvariantsAlone(t *testing.T) {
	report := map[string]any{
		"level": "bytes", "dialect": "openai-chat", "schema": false,
		"invariants": []any{
			map[string]any{"id": "ACC-ORDER", "status": "pass"},
			map[string]any{"id": "ACC-FIDELITY", "status": "fail", "rule": "args exact", "failures": json1("3")},
		},
		"failures": []any{map[string]any{"case": "gen/1/5", "generated": []any{json1("1"), json1("5")},
			"violations": []any{map[string]any{"invariant": "ACC-FIDELITY", "grade": "must", "call_id": "c", "expected": "a", "observed": "b"}}}},
	}
	fs := findings(report, "exec:x", t.TempDir())
	if len(fs) != 1 {
		t.Fatalf("%+v", fs)
	}
	f := fs[0]
	if f.Invariant != "ACC-FIDELITY" || f.Grade != "must" || f.Count != 3 || f.Case != "gen/1/5" ||
		f.Replay != "toolcert certify --subject exec:x --level bytes --dialect openai-chat --no-schema --seed 1 --cases 6 --case gen/1/5" ||
		!strings.Contains(f.Message, "call c: expected a; observed b") {
		t.Errorf("%+v", f)
	}
}

func json1(s string) json.Number { return json.Number(s) }
