package toolcert

// Certify runs the toolcert binary against an adapter and reads its findings: what the `go
// test` helper (CertifyTest) reports as failing subtests.
//
// The binary is $TOOLCERT_BIN when set, otherwise `toolcert` on PATH. Run runs `toolcert
// certify --format json --out DIR` and returns a Report whose Findings are the report's
// findings[] when it has them, otherwise one finding per failing invariant built from its
// invariants[] and failures[]; each carries its reproducer (the scenario file --out wrote)
// and the command line that replays it.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ToolcertError: toolcert could not be run, or refused the run (a usage or internal error).
type ToolcertError struct{ Message string }

func (e *ToolcertError) Error() string { return e.Message }

// FindBinary is $TOOLCERT_BIN, otherwise `toolcert` on PATH.
func FindBinary() (string, error) {
	if env := os.Getenv("TOOLCERT_BIN"); env != "" {
		st, err := os.Stat(env)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", &ToolcertError{fmt.Sprintf("TOOLCERT_BIN=%s is not an executable file", env)}
		}
		return env, nil
	}
	found, err := exec.LookPath("toolcert")
	if err != nil {
		return "", &ToolcertError{"the toolcert binary is not on PATH and TOOLCERT_BIN is not set " +
			"(install it with `cargo install --path .` in a toolcert checkout, or point TOOLCERT_BIN at it)"}
	}
	return found, nil
}

// SubjectName is `exec:CMD` for a bare command; `builtin:...` and `exec:...` unchanged.
func SubjectName(subject string) string {
	if strings.HasPrefix(subject, "exec:") || strings.HasPrefix(subject, "builtin:") {
		return subject
	}
	return "exec:" + subject
}

// Options are the certification's settings; the zero value is toolcert's defaults.
type Options struct {
	Level    string   // events (default), wire or bytes
	Dialect  string   // for wire and bytes
	Cases    int      // 0: toolcert's default
	Seed     *uint64  // nil: toolcert's default
	Grade    string   // "must" to fail on must rules only
	NoSchema bool     // certify with the schema profile off
	Case     string   // one named case
	Args     []string // more command-line arguments
	OutDir   string   // where reproducers go (default: a new temporary directory)
	Dir      string   // the working directory of toolcert (and so of the subject)
	Timeout  time.Duration
}

// Finding is one bug: the invariant it breaks, how often, its smallest reproducer, its
// replay line.
type Finding struct {
	Invariant  string
	Grade      string
	Count      int
	Case       string
	Message    string
	Replay     string
	Reproducer string
	ID         string
	Raw        map[string]any
}

func (f Finding) String() string {
	head := f.Invariant
	if f.Grade != "" {
		head += " (" + f.Grade + ")"
	}
	if f.ID != "" {
		head += " [" + f.ID + "]"
	}
	plural := "s"
	if f.Count == 1 {
		plural = ""
	}
	lines := []string{fmt.Sprintf("%s: %d failing case%s", head, f.Count, plural)}
	if f.Case != "" {
		lines = append(lines, "  smallest case: "+f.Case)
	}
	if f.Message != "" {
		for _, l := range strings.Split(f.Message, "\n") {
			lines = append(lines, "  "+l)
		}
	}
	if f.Reproducer != "" {
		lines = append(lines, "  reproducer: "+f.Reproducer)
	}
	if f.Replay != "" {
		lines = append(lines, "  replay: "+f.Replay)
	}
	return strings.Join(lines, "\n")
}

// Report is a certification: its JSON summary, exit code and findings.
type Report struct {
	Subject  string
	Command  []string
	ExitCode int
	JSON     map[string]any
	Findings []Finding
	OutDir   string
}

// Invariant is one rule of the run: its id, status (pass, fail or n/a) and rule text.
type Invariant struct {
	ID     string
	Status string
	Rule   string
}

// Conforms: the report says so and has no finding.
func (r *Report) Conforms() bool {
	c, _ := r.JSON["conforms"].(bool)
	return c && len(r.Findings) == 0
}

// Invariants are the rules of the run.
func (r *Report) Invariants() []Invariant {
	var out []Invariant
	list, _ := r.JSON["invariants"].([]any)
	for _, x := range list {
		m, _ := x.(map[string]any)
		id, _ := m["id"].(string)
		if id == "" {
			continue
		}
		st, _ := m["status"].(string)
		rule, _ := m["rule"].(string)
		out = append(out, Invariant{id, st, rule})
	}
	return out
}

// FindingsFor are the findings of one invariant.
func (r *Report) FindingsFor(invariant string) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Invariant == invariant {
			out = append(out, f)
		}
	}
	return out
}

// Summary: the verdict and every finding.
func (r *Report) Summary() string {
	verdict := "DOES NOT CONFORM"
	if r.Conforms() {
		verdict = "conforms"
	}
	cases := "?"
	if c, ok := r.JSON["cases"]; ok {
		cases = fmt.Sprint(c)
	}
	lines := []string{fmt.Sprintf("%s: %s (%s cases, exit %d)", r.Subject, verdict, cases, r.ExitCode)}
	for _, f := range r.Findings {
		lines = append(lines, f.String())
	}
	return strings.Join(lines, "\n")
}

// Run certifies subject (a command, or `exec:CMD` / `builtin:NAME`) with the toolcert binary
// and returns its report. The error is a *ToolcertError when toolcert cannot run or refuses
// the options (exit 2 or 5), naming what it said.
func Run(subject string, o Options) (*Report, error) {
	subject = SubjectName(subject)
	binary, err := FindBinary()
	if err != nil {
		return nil, err
	}
	out := o.OutDir
	if out == "" {
		if out, err = os.MkdirTemp("", "toolcert-"); err != nil {
			return nil, &ToolcertError{err.Error()}
		}
	}
	args := []string{"certify", "--subject", subject, "--format", "json", "--out", out}
	if o.Level != "" {
		args = append(args, "--level", o.Level)
	}
	if o.Dialect != "" {
		args = append(args, "--dialect", o.Dialect)
	}
	if o.Cases > 0 {
		args = append(args, "--cases", strconv.Itoa(o.Cases))
	}
	if o.Seed != nil {
		args = append(args, "--seed", strconv.FormatUint(*o.Seed, 10))
	}
	if o.Grade != "" {
		args = append(args, "--grade", o.Grade)
	}
	if o.NoSchema {
		args = append(args, "--no-schema")
	}
	if o.Case != "" {
		args = append(args, "--case", o.Case)
	}
	args = append(args, o.Args...)
	ctx := context.Background()
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = o.Dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	command := append([]string{binary}, args...)
	runErr := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) || ctx.Err() != nil {
		return nil, &ToolcertError{fmt.Sprintf("running %s: %v", shellJoin(command), firstErr(ctx.Err(), runErr))}
	}
	switch code {
	case 0, 1, 3, 4:
	default:
		said := strings.TrimSpace(stderr.String())
		if said == "" {
			said = strings.TrimSpace(stdout.String())
		}
		return nil, &ToolcertError{fmt.Sprintf("%s exited %d: %s", shellJoin(command), code, said)}
	}
	var report map[string]any
	dec := json.NewDecoder(&stdout)
	dec.UseNumber()
	if err := dec.Decode(&report); err != nil {
		return nil, &ToolcertError{fmt.Sprintf("%s did not print a JSON report: %v (stderr: %.2000s)", shellJoin(command), err, stderr.String())}
	}
	return &Report{Subject: subject, Command: command, ExitCode: code, JSON: report,
		Findings: findings(report, subject, out), OutDir: out}, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// fileStem names reproducers as toolcert_runner::report::file_stem does.
func fileStem(c string) string {
	var b strings.Builder
	for _, r := range c {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func num(v any) int {
	switch x := v.(type) {
	case json.Number:
		n, _ := strconv.Atoi(string(x))
		return n
	case float64:
		return int(x)
	}
	return 0
}

func violationText(v map[string]any) string {
	where := "the turn"
	if id := str(v, "call_id"); id != "" {
		where = "call " + id
	}
	return fmt.Sprintf("%s: expected %s; observed %s", where, show(v["expected"]), show(v["observed"]))
}

// show writes a violation's value as Python's report does: strings bare, others as JSON.
func show(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return "None"
	}
	b, err := Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// settingArgs are the setting's flags, as toolcert_runner::Report::setting_args prints them.
func settingArgs(report map[string]any, subject string) []string {
	args := []string{"--subject", subject}
	level := str(report, "level")
	if level == "" {
		level = "events"
	}
	if level != "events" {
		args = append(args, "--level", level)
		if d := str(report, "dialect"); d != "" {
			args = append(args, "--dialect", d)
		}
		if b, _ := report["chat_index_zero"].(bool); b {
			args = append(args, "--chat-index-zero")
		}
		if b, _ := report["chat_repeat_fields"].(bool); b {
			args = append(args, "--chat-repeat-fields")
		}
	}
	if b, ok := report["schema"].(bool); ok && !b {
		args = append(args, "--no-schema")
	}
	if str(report, "grade") == "must" {
		args = append(args, "--grade", "must")
	}
	return args
}

func replayLine(report map[string]any, subject, c string, generated any, reproducer string) string {
	base := append([]string{"toolcert", "certify"}, settingArgs(report, subject)...)
	if reproducer != "" {
		return shellJoin(append(base, "--scenario", reproducer))
	}
	if c == "" {
		return ""
	}
	if g, ok := generated.([]any); ok && len(g) == 2 {
		return shellJoin(append(base, "--seed", show(g[0]), "--cases", strconv.Itoa(num(g[1])+1), "--case", c))
	}
	return shellJoin(append(base, "--case", c))
}

func findings(report map[string]any, subject, outDir string) []Finding {
	reproducerOf := func(c string) string {
		if c == "" {
			return ""
		}
		name := fileStem(c) + ".json"
		path := filepath.Join(outDir, "failures", name)
		if _, err := os.Stat(path); err == nil {
			return path
		}
		// A run over several settings writes each setting's reproducers in a directory of its own.
		found, _ := filepath.Glob(filepath.Join(outDir, "*", "failures", name))
		sort.Strings(found)
		if len(found) > 0 {
			return found[0]
		}
		return ""
	}
	transcript := func(m map[string]any) []string {
		t := str(m, "transcript")
		if t == "" {
			return nil
		}
		lines := []string{"transcript:"}
		for _, l := range strings.Split(t, "\n") {
			lines = append(lines, "  "+l)
		}
		return lines
	}
	violations := func(m map[string]any, invariant string) []string {
		all, _ := m["violations"].([]any)
		var mine, every []string
		for _, x := range all {
			v, _ := x.(map[string]any)
			every = append(every, violationText(v))
			if str(v, "invariant") == invariant {
				mine = append(mine, violationText(v))
			}
		}
		if len(mine) > 0 {
			return mine
		}
		return every
	}
	var found []Finding
	if list, ok := report["findings"].([]any); ok {
		// One entry per distinct bug: {id, invariant, grade, kind, title, cases, first_case,
		// reproducer: a failure kept in full {case, violations, transcript, scenario}, replay}.
		for _, x := range list {
			f, _ := x.(map[string]any)
			kept, _ := f["reproducer"].(map[string]any)
			c := firstNonEmpty(str(kept, "case"), str(f, "first_case"), str(f, "case"))
			lines := []string{firstNonEmpty(str(f, "title"), str(f, "kind"))}
			if kept != nil {
				lines = append(lines, violations(kept, str(f, "invariant"))...)
				lines = append(lines, transcript(kept)...)
			}
			if fc := str(f, "first_case"); fc != "" && fc != c {
				lines = append(lines, "first seen in "+fc)
			}
			count := num(f["cases"])
			if count == 0 {
				count = num(f["count"])
			}
			if count == 0 {
				count = 1
			}
			rep := reproducerOf(c)
			replay := str(f, "replay")
			if replay == "" {
				replay = replayLine(report, subject, c, kept["generated"], rep)
			}
			found = append(found, Finding{Invariant: firstNonEmpty(str(f, "invariant"), "?"), Grade: str(f, "grade"),
				Count: count, Case: c, Message: joinNonEmpty(lines), Replay: replay, Reproducer: rep, ID: str(f, "id"), Raw: f})
		}
		return found
	}
	// Without findings[]: one finding per failing invariant, its first kept failure as the
	// reproducer.
	failures, _ := report["failures"].([]any)
	invs, _ := report["invariants"].([]any)
	for _, x := range invs {
		inv, _ := x.(map[string]any)
		if str(inv, "status") != "fail" {
			continue
		}
		id := str(inv, "id")
		var first map[string]any
		for _, y := range failures {
			fl, _ := y.(map[string]any)
			vs, _ := fl["violations"].([]any)
			for _, z := range vs {
				if v, _ := z.(map[string]any); str(v, "invariant") == id {
					first = fl
				}
			}
			if first != nil {
				break
			}
		}
		lines := []string{str(inv, "rule")}
		grade, c := "", ""
		var generated any
		if first != nil {
			c = str(first, "case")
			generated = first["generated"]
			vs, _ := first["violations"].([]any)
			for _, z := range vs {
				if v, _ := z.(map[string]any); str(v, "invariant") == id {
					if grade == "" {
						grade = str(v, "grade")
					}
					lines = append(lines, violationText(v))
				}
			}
			lines = append(lines, transcript(first)...)
		} else {
			lines = append(lines, "(no failure of this rule kept in full: run with --show or a larger --out)")
		}
		if grade == "" {
			grade = "should"
			if str(inv, "must") == "fail" {
				grade = "must"
			}
		}
		rep := reproducerOf(c)
		found = append(found, Finding{Invariant: id, Grade: grade, Count: num(inv["failures"]), Case: c,
			Message: joinNonEmpty(lines), Replay: replayLine(report, subject, c, generated, rep), Reproducer: rep, Raw: inv})
	}
	return found
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func joinNonEmpty(lines []string) string {
	var keep []string
	for _, l := range lines {
		if l != "" {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// shellJoin quotes each argument for a POSIX shell, as Python's shlex.join does.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = shellQuote(a)
	}
	return strings.Join(out, " ")
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./-_", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}
