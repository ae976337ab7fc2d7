package toolcert

// The `go test` integration: certify an adapter with the toolcert binary and report each
// finding as a failing subtest, with its reproducer and replay line.
//
//	func TestMyAccumulator(t *testing.T) {
//		adapter := toolcert.Build(t, "./adapter")
//		toolcert.Certify(t, adapter, toolcert.Options{Cases: 300, NoSchema: true})
//	}
//
// Certify runs one certification, then one subtest per invariant of the run: it passes,
// fails with its findings, or is skipped for a rule no case of the run could break (n/a).

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Certify certifies subject (a command, or `exec:CMD`) and runs one subtest per invariant,
// named after it (TestX/ACC-FIDELITY); a subtest fails with each finding of its invariant,
// its smallest case, reproducer and replay line. It fails t at once when toolcert cannot
// run. The reproducers go to Options.OutDir, or to a directory kept after the test (so the
// printed reproducer and replay line can be run), named in the log.
func Certify(t testing.TB, subject string, o Options) *Report {
	t.Helper()
	if o.OutDir == "" {
		dir, err := os.MkdirTemp("", "toolcert-go-")
		if err != nil {
			t.Fatal(err)
		}
		o.OutDir = dir
	}
	report, err := Run(subject, o)
	if err != nil {
		t.Fatalf("toolcert certify %s: %v", SubjectName(subject), err)
		return nil
	}
	t.Logf("%s (reproducers in %s)", firstLine(report.Summary()), report.OutDir)
	runner, ok := t.(*testing.T)
	if !ok {
		// A benchmark or fuzz target: no subtests, one failure listing every finding.
		if !report.Conforms() {
			t.Error(report.Summary())
		}
		return report
	}
	status := map[string]string{}
	var ids []string
	for _, inv := range report.Invariants() {
		status[inv.ID] = inv.Status
		ids = append(ids, inv.ID)
	}
	// Findings the report has for a rule it does not list still fail a subtest of their own.
	for _, f := range report.Findings {
		if _, listed := status[f.Invariant]; !listed {
			status[f.Invariant] = "fail"
			ids = append(ids, f.Invariant)
		}
	}
	if len(ids) == 0 {
		runner.Run("conformance", func(t *testing.T) {
			if !report.Conforms() {
				t.Error(report.Summary())
			}
		})
		return report
	}
	for _, id := range ids {
		runner.Run(id, func(t *testing.T) {
			mine := report.FindingsFor(id)
			for _, f := range mine {
				t.Error("\n" + f.String())
			}
			switch {
			case len(mine) == 0 && status[id] == "fail":
				t.Errorf("%s fails (%s); see %s", id, report.Subject, report.OutDir)
			case status[id] == "n/a":
				t.Skipf("%s: n/a, no case of this run could break it", id)
			}
		})
	}
	return report
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Build compiles the Go package pkg (as `go build` names it, relative to the test's
// directory) with the `go` command on PATH, and returns the binary's path, to use
// as the subject. The binary goes to a directory kept after the test (under the user's
// cache directory), so a replay line that names it still runs once the test is over.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	sum := sha256.Sum256([]byte(wd + "\x00" + pkg))
	dir := filepath.Join(base, "toolcert-go", hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(strings.TrimSuffix(pkg, "/..."))
	if name == "." || name == "/" {
		name = filepath.Base(wd)
	}
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}
