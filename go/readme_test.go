package toolcert

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The README's adapter is examples/toyacc/adapter/main.go (which go/ci.sh certifies), from
// its type on.
func TestTheReadmeAdapterIsTheExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## An adapter\n.*?```go\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no Go block under ## An adapter")
	}
	example, err := os.ReadFile("examples/toyacc/adapter/main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(example), "type adapter struct")
	if !ok || string(m[1]) != "type adapter struct"+body {
		t.Errorf("the README's adapter differs from examples/toyacc/adapter/main.go:\n%s", m[1])
	}
}
