package toyacc_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	toolcert "github.com/toolcert/toolcert/go"
)

// TestToyacc certifies toyacc with toolcert: one subtest per invariant. TOYACC_FLAGS=--buggy
// certifies the trimming variant, which fails ACC-FIDELITY; CASES sets the number of cases.
func TestToyacc(t *testing.T) {
	cases, _ := strconv.Atoi(os.Getenv("CASES"))
	if cases == 0 {
		cases = 300
	}
	subject := strings.TrimSpace(toolcert.Build(t, "./adapter") + " " + os.Getenv("TOYACC_FLAGS"))
	toolcert.Certify(t, subject, toolcert.Options{Cases: cases, NoSchema: true})
}
