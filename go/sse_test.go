package toolcert

import (
	"errors"
	"reflect"
	"testing"
)

func ptr(s string) *string { return &s }

func feedAll(t *testing.T, chunks ...string) ([]WireEvent, error) {
	t.Helper()
	d := NewSSEDecoder()
	var all []WireEvent
	for _, c := range chunks {
		evs, err := d.Feed([]byte(c))
		all = append(all, evs...)
		if err != nil {
			return all, err
		}
	}
	return all, d.Finish()
}

func TestSSELineEndsAndFields(t *testing.T) {
	got, err := feedAll(t,
		"\ufeffevent: a\r", "\ndata: 1\r\n", "\r\n",
		": a comment\ndata:2\ndata: 3\nid: 7\nretry: 10\n\n",
		"event: b\rdata: x\r\r",
		"data: unterminated")
	if err != nil {
		t.Fatal(err)
	}
	want := []WireEvent{
		{Event: ptr("a"), Data: "1"},
		{Data: "2\n3", ID: ptr("7")},
		{Event: ptr("b"), Data: "x"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestSSEEventWithoutDataIsNoEvent(t *testing.T) {
	got, err := feedAll(t, "event: ping\n\n", "data\n\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := []WireEvent{{Data: ""}}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
}

func TestSSEUTF8SplitAcrossChunks(t *testing.T) {
	text := "data: é😀€\n\n"
	b := []byte(text)
	for cut1 := 1; cut1 < len(b); cut1++ {
		for cut2 := cut1; cut2 < len(b); cut2++ {
			got, err := feedAll(t, string(b[:cut1]), string(b[cut1:cut2]), string(b[cut2:]))
			if err != nil || len(got) != 1 || got[0].Data != "é😀€" {
				t.Fatalf("cuts %d,%d: %+v %v", cut1, cut2, got, err)
			}
		}
	}
}

func TestSSEInvalidUTF8IsMalformed(t *testing.T) {
	for name, chunks := range map[string][]string{
		"invalid byte":               {"data: \xff\n\n"},
		"overlong":                   {"data: \xc0\xaf\n\n"},
		"surrogate encoded":          {"data: \xed\xa0\x80\n\n"},
		"cut by the line end":        {"data: \xe2\x82\n\n"},
		"bad continuation later":     {"data: \xe2", "\x41\n\n"},
		"stream ends in a character": {"data: \xf0\x9f"},
	} {
		_, err := feedAll(t, chunks...)
		var turn *TurnError
		if !errors.As(err, &turn) || turn.Class != "malformed" {
			t.Errorf("%s: %v", name, err)
		}
	}
}
