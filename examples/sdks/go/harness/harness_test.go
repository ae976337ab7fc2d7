package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"

	toolcert "github.com/toolcert/toolcert/go"
)

func TestFeedHandsOutChunksAsCutAndEndsAsTheStreamEnded(t *testing.T) {
	for end, want := range map[toolcert.End]error{
		toolcert.EndEOF: io.EOF, toolcert.EndDisconnect: io.ErrUnexpectedEOF, toolcert.EndCancel: context.Canceled,
	} {
		f := NewFeed([][]byte{[]byte("dat"), {}, []byte("a: x\n\n")}, end)
		buf := make([]byte, 4)
		var reads []string
		var err error
		for {
			var n int
			n, err = f.Read(buf)
			if err != nil {
				break
			}
			reads = append(reads, string(buf[:n]))
			if units, ended := f.Stamp(); ended || units > 3 {
				t.Fatalf("stamp %d %v before the end", units, ended)
			}
		}
		// Never two chunks in one read; a chunk longer than the buffer in pieces.
		if len(reads) != 3 || reads[0] != "dat" || reads[1] != "a: x" || reads[2] != "\n\n" {
			t.Errorf("%s: reads %q", end, reads)
		}
		if !errors.Is(err, want) {
			t.Errorf("%s: ended with %v, want %v", end, err, want)
		}
		if units, ended := f.Stamp(); units != 3 || !ended {
			t.Errorf("%s: stamp %d %v", end, units, ended)
		}
	}
}

func TestTransportAnswersOnceWithTheFeed(t *testing.T) {
	tr := &Transport{}
	tr.Set(NewFeed([][]byte{[]byte("data: 1\n\n")}, toolcert.EndEOF))
	client := tr.Client()
	resp, err := client.Get("http://toolcert.invalid/v1/x")
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" || line != "data: 1\n" {
		t.Errorf("%d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), line)
	}
	if _, err := client.Get("http://toolcert.invalid/v1/x"); err == nil {
		t.Error("a second request was answered")
	}
	if tr.Requests != 2 {
		t.Errorf("%d requests", tr.Requests)
	}
}

func TestPolicyFrom(t *testing.T) {
	t.Setenv("TOOLCERT_POLICY", "")
	for args, want := range map[string]string{"": "as-handed-over", "--policy documented": "documented", "--policy=as-handed-over": "as-handed-over"} {
		var argv []string
		if args != "" {
			argv = []string{args}
			if args == "--policy documented" {
				argv = []string{"--policy", "documented"}
			}
		}
		if got, err := PolicyFrom(argv); err != nil || got != want {
			t.Errorf("%q: %q %v", args, got, err)
		}
	}
	if _, err := PolicyFrom([]string{"--policy", "lenient"}); err == nil {
		t.Error("an unknown policy was taken")
	}
	if _, err := PolicyFrom([]string{"--policy"}); err == nil {
		t.Error("--policy without a name was taken")
	}
	t.Setenv("TOOLCERT_POLICY", "documented")
	if got, _ := PolicyFrom(nil); got != "documented" {
		t.Errorf("TOOLCERT_POLICY: %q", got)
	}
}

func TestFromArgumentText(t *testing.T) {
	if c := FromArgumentText("c", "f", ""); c.Unparseable || len(c.Args.(map[string]any)) != 0 {
		t.Errorf("no bytes: %+v", c)
	}
	if c := FromArgumentText("c", "f", `{"n": 1.0}{}`); !c.Unparseable || c.Raw != `{"n": 1.0}{}` {
		t.Errorf("two documents: %+v", c)
	}
	c := FromArgumentText("c", "f", `{"n": 12345678901234567890.0}`)
	out, _ := toolcert.Marshal(c.Args)
	if c.Unparseable || string(out) != `{"n":12345678901234567890.0}` {
		t.Errorf("numbers: %s", out)
	}
	if StopSignal("length", ChatComplete, ChatCut) != Cut || StopSignal("", ChatComplete, ChatCut) != Unfinished ||
		StopSignal("tool_calls", ChatComplete, ChatCut) != Complete {
		t.Error("StopSignal")
	}
}

func TestClassifyCommon(t *testing.T) {
	if ClassifyCommon(io.ErrUnexpectedEOF) != "incomplete" || ClassifyCommon(context.Canceled) != "incomplete" {
		t.Error("transport ends")
	}
	var v any
	err := jsonErr(&v)
	if ClassifyCommon(err) != "malformed" || ClassifyCommon(errors.New("x")) != "other" {
		t.Errorf("%v", err)
	}
}

func jsonErr(v any) error { return json.Unmarshal([]byte("{"), v) }
