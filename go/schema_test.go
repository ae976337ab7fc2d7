package toolcert

import (
	"strings"
	"testing"
)

func mustParse(t *testing.T, s string) any {
	t.Helper()
	v, err := ParseString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSchemaErrors(t *testing.T) {
	schema := mustParse(t, `{"type": "object", "required": ["id", "qty"], "additionalProperties": false,
		"properties": {
			"id": {"type": "string", "minLength": 2, "maxLength": 4},
			"qty": {"type": "integer", "minimum": 1, "exclusiveMaximum": 10},
			"price": {"type": "number", "maximum": 0.1000000000000000000001},
			"tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 2},
			"kind": {"anyOf": [{"const": 1.0}, {"type": "null"}]},
			"note": {"not": {"type": "string"}}
		}}`)
	for doc, want := range map[string][]string{
		`{"id": "ab", "qty": 3}`:                                    nil,
		`{"id": "éé", "qty": 9.0, "kind": 1}`:                       nil, // 9.0 is an integer; 1 equals 1.0; é is one character
		`{"id": "ab", "qty": 3, "kind": null}`:                      nil,
		`{"id": "ab", "qty": 3, "price": 0.1000000000000000000001}`: nil,
		`{"id": "ab", "qty": 3, "price": 0.1000000000000000000002}`: {"/price: maximum"},
		`{"qty": 0}`:                                      {`"id" is missing`, "/qty: minimum 1"},
		`{"id": "a", "qty": 10}`:                          {"/id: shorter than 2", "/qty: exclusiveMaximum 10"},
		`{"id": "abcde", "qty": 2.5}`:                     {"/id: longer than 4", "/qty: not of type integer"},
		`{"id": "ab", "qty": 3, "x": 1}`:                  {`additional property "x"`},
		`{"id": "ab", "qty": 3, "tags": ["a", "c", "b"]}`: {"/tags/1: not one of the enum values", "/tags: more than 2 items"},
		`{"id": "ab", "qty": 3, "kind": 2}`:               {"/kind: matches none of anyOf"},
		`{"id": "ab", "qty": 3, "note": "x"}`:             {"/note: matches the `not` schema"},
		`[1]`:                                             {"/: not of type object"},
	} {
		got := SchemaErrors(schema, mustParse(t, doc))
		if len(got) != len(want) {
			t.Errorf("%s: %q, want %q", doc, got, want)
			continue
		}
		for i := range want {
			if !strings.Contains(got[i], want[i]) {
				t.Errorf("%s: %q, want %q", doc, got, want)
			}
		}
	}
	if got := SchemaErrors(false, nil); len(got) != 1 {
		t.Errorf("false schema: %q", got)
	}
	if got := SchemaErrors(true, mustParse(t, `{"a": 1}`)); got != nil {
		t.Errorf("true schema: %q", got)
	}
}
