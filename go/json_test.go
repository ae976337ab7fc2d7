package toolcert

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseRefusesWhatRFC8259Refuses(t *testing.T) {
	refused := map[string]string{
		"NaN":                     `{"a": NaN}`,
		"Infinity":                `[Infinity]`,
		"negative infinity":       `-Infinity`,
		"leading zero":            `01`,
		"bare dot":                `.5`,
		"trailing dot":            `1.`,
		"plus sign":               `+1`,
		"hex":                     `0x1F`,
		"exponent without digits": `1e`,
		"lone minus":              `-`,
		"overflowing a double":    `{"n": 1e400}`,
		"negative overflow":       `[-1e400]`,
		"trailing text":           `{} x`,
		"second document":         `1 2`,
		"lone high surrogate":     `"\ud800"`,
		"lone low surrogate":      `"\udc00"`,
		"two highs":               `"\ud800\ud800"`,
		"high then text":          `"\ud83dx"`,
		"surrogate in a key":      `{"\udfff": 1}`,
		"invalid UTF-8":           "\"\xff\"",
		"truncated UTF-8":         "\"\xe2\x82\"",
		"control character":       "\"a\x01\"",
		"bad escape":              `"\x"`,
		"empty":                   ``,
		"whitespace only":         " \n",
		"single quotes":           `{'a': 1}`,
		"trailing comma":          `[1,]`,
		"unterminated":            `{"a": 1`,
	}
	for name, text := range refused {
		if v, err := ParseString(text); err == nil {
			t.Errorf("%s: %q parsed as %#v", name, text, v)
		} else if !IsNotJSON(err) {
			t.Errorf("%s: the error %v is not a *NotJSON", name, err)
		}
	}
}

func TestParseKeepsEveryNumberAsWritten(t *testing.T) {
	for _, text := range []string{
		`9007199254740993`, `12345678901234567890123`, `-0`, `-0.0`, `0.0`, `1.0`, `2.50`,
		`0.1000000000000000000001`, `1E+2`, `1e-7`, `5e0`, `1e-400`, `-18446744073709551616`,
	} {
		v, err := ParseString(text)
		if err != nil {
			t.Errorf("%s: %v", text, err)
			continue
		}
		if n, ok := v.(json.Number); !ok || string(n) != text {
			t.Errorf("%s: parsed as %#v", text, v)
		}
		out, err := Marshal(map[string]any{"n": v})
		if err != nil || string(out) != `{"n":`+text+`}` {
			t.Errorf("%s: written back as %s (%v)", text, out, err)
		}
	}
}

func TestParseValues(t *testing.T) {
	v, err := ParseString(" {\"a\": [true, false, null, \"\\u00e9\\ud83d\\ude00\\n\"], \"b\": {}} \r\n")
	if err != nil {
		t.Fatal(err)
	}
	out, _ := Marshal(v)
	if want := "{\"a\":[true,false,null,\"é😀\\n\"],\"b\":{}}"; string(out) != want {
		t.Errorf("got %s, want %s", out, want)
	}
	// A key written twice keeps its last value (docs/SPEC.md, duplicate_keys).
	v, err = ParseString(`{"a": 1, "b": 2, "a": 3}`)
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := Marshal(v); string(out) != `{"a":3,"b":2}` {
		t.Errorf("duplicate keys: %s", out)
	}
	// Any JSON value at the top level, not only an object.
	for _, text := range []string{`42`, `"text"`, `[1, 2]`, `null`} {
		if _, err := ParseString(text); err != nil {
			t.Errorf("%s: %v", text, err)
		}
	}
	// Raw U+2028 and noncharacters are legal; HTML characters are written as they are.
	if v, err := ParseString("\"\u2028\uFDD0<&>\""); err != nil || v != "\u2028\uFDD0<&>" {
		t.Errorf("raw U+2028: %#v %v", v, err)
	}
	if out, _ := Marshal("<&>"); string(out) != `"<&>"` {
		t.Errorf("HTML escaped: %s", out)
	}
}

func TestParseDepth(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	if _, err := ParseString(deep(MaxDepth)); err != nil {
		t.Errorf("%d levels: %v", MaxDepth, err)
	}
	if _, err := ParseString(deep(MaxDepth + 1)); err == nil {
		t.Errorf("%d levels parsed", MaxDepth+1)
	}
	// Brackets inside strings are not nesting.
	if _, err := ParseString(`"` + strings.Repeat("[", 2000) + `"`); err != nil {
		t.Errorf("brackets in a string: %v", err)
	}
	// Far too deep is refused without exhausting anything.
	if _, err := ParseString(strings.Repeat("{\"a\":", 100000)); err == nil {
		t.Error("100000 levels parsed")
	}
}

func TestMarshalRefusesWhatJSONCannotHold(t *testing.T) {
	var zero float64
	if _, err := Marshal([]any{zero / zero}); err == nil {
		t.Error("NaN written")
	}
	if _, err := Marshal(json.Number("NaN")); err == nil {
		t.Error("a json.Number NaN written")
	}
}
