package toolcert

// Strict JSON: the parse an accumulator makes at dispatch, and the writer of replies.
//
// encoding/json is close to RFC 8259 but not exact: it replaces invalid UTF-8 and lone
// surrogate escapes (`"\ud800"`) with U+FFFD instead of refusing them, nests 10,000 levels
// deep, and reads numbers as float64 unless told otherwise. Parse refuses what serde_json
// (the oracle's parser) refuses and reads every number as a json.Number, which keeps the
// text the model wrote; Marshal writes that text back, so a dispatched argument keeps its
// exact decimal value (`12345678901234567890`, `0.1000000000000000000001`) and its kind
// (`1.0` stays `1.0`).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// MaxDepth: documents nested up to 512 levels parse, as the harness's oracle parses them
// (docs/SPEC.md, "Generated space"); a deeper one is refused.
const MaxDepth = 512

// NotJSON is the error of Parse: the text is not exactly one JSON document.
type NotJSON struct{ Reason string }

func (e *NotJSON) Error() string { return "not JSON: " + e.Reason }

func notJSON(format string, args ...any) error {
	return &NotJSON{Reason: fmt.Sprintf(format, args...)}
}

// Parse reads exactly one JSON document (RFC 8259) as strictly as serde_json reads it:
// nothing after the document, no invalid UTF-8, no lone surrogate escapes, at most MaxDepth
// levels of nesting, no number that overflows a double (`1e400`). Objects are
// map[string]any (a key written twice keeps its last value, as serde_json, JSON.parse and
// Python's json do), arrays []any, numbers json.Number (the literal as written), strings,
// bools and nil. The error is a *NotJSON.
func Parse(text []byte) (any, error) {
	if !utf8.Valid(text) {
		return nil, notJSON("invalid UTF-8")
	}
	if err := prescan(text); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if err == io.EOF {
			return nil, notJSON("empty document")
		}
		return nil, notJSON("%v", err)
	}
	if tok, err := dec.Token(); err != io.EOF {
		if err != nil {
			return nil, notJSON("after the document: %v", err)
		}
		return nil, notJSON("text after the document (%v)", tok)
	}
	if err := checkNumbers(v); err != nil {
		return nil, err
	}
	return v, nil
}

// ParseString is Parse of a string.
func ParseString(text string) (any, error) { return Parse([]byte(text)) }

// prescan refuses what encoding/json lets through: lone surrogate escapes (it makes them
// U+FFFD) and nesting deeper than MaxDepth. Syntax errors are left to the decoder.
func prescan(s []byte) error {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '{':
			depth++
			if depth > MaxDepth {
				return notJSON("nested too deeply (more than %d levels)", MaxDepth)
			}
		case ']', '}':
			depth--
		case '"':
			// A string: only its escapes matter here.
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] != '\\' {
					continue
				}
				i++
				if i >= len(s) || s[i] != 'u' {
					continue
				}
				r, ok := hex4(s, i+1)
				if !ok {
					return notJSON("bad \\u escape at byte %d", i-1)
				}
				i += 4
				switch {
				case r >= 0xDC00 && r <= 0xDFFF:
					return notJSON("lone surrogate \\u%04x at byte %d", r, i-5)
				case r >= 0xD800 && r <= 0xDBFF:
					// A high surrogate must be followed at once by a low one.
					if i+2 >= len(s) || s[i+1] != '\\' || s[i+2] != 'u' {
						return notJSON("lone surrogate \\u%04x at byte %d", r, i-5)
					}
					lo, ok := hex4(s, i+3)
					if !ok || lo < 0xDC00 || lo > 0xDFFF {
						return notJSON("lone surrogate \\u%04x at byte %d", r, i-5)
					}
					i += 6
				}
			}
		}
	}
	return nil
}

func hex4(s []byte, at int) (rune, bool) {
	if at+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// checkNumbers refuses a number a double cannot hold: serde_json reads `1e400` as an
// error, never as infinity. Iterative, so a deep document costs no deep recursion.
func checkNumbers(v any) error {
	stack := []any{v}
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch x := top.(type) {
		case json.Number:
			if f, err := strconv.ParseFloat(string(x), 64); err != nil && math.IsInf(f, 0) {
				return notJSON("number out of range: %.40s", string(x))
			}
		case []any:
			stack = append(stack, x...)
		case map[string]any:
			for _, e := range x {
				stack = append(stack, e)
			}
		}
	}
	return nil
}

// Marshal writes v as compact JSON: json.Number as written, strings without HTML escaping,
// map keys sorted. It refuses what JSON cannot hold (NaN, infinities, channels, ...).
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// IsNotJSON tells whether err is (or wraps) a *NotJSON.
func IsNotJSON(err error) bool {
	var n *NotJSON
	return errors.As(err, &n)
}
