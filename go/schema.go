package toolcert

// A small JSON Schema validator, for adapters that declare the `schema` capability: the
// keywords tool schemas use, with numbers compared by exact decimal value (json.Number as
// big.Rat), as the harness compares them.

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"unicode/utf8"
)

// SchemaErrors validates value (as Parse gives it) against a JSON Schema (as the run
// request's Tool.Schema gives it), for the keywords tool schemas use: type, enum, const,
// properties, required, additionalProperties, items, minLength, maxLength, minItems,
// maxItems, minimum, maximum, exclusiveMinimum, exclusiveMaximum, anyOf, allOf, not. Other
// keywords are ignored. It returns one message per violation, none when value conforms.
func SchemaErrors(schema, value any) []string {
	return schemaErrors(schema, value, "")
}

func rat(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x))
		return r, ok
	case float64:
		return new(big.Rat).SetFloat64(x), true
	case int:
		return new(big.Rat).SetInt64(int64(x)), true
	case int64:
		return new(big.Rat).SetInt64(x), true
	}
	return nil, false
}

func isNumber(v any) bool {
	_, ok := rat(v)
	return ok
}

// JSONEqual is JSON equality: numbers by exact value (1.0 equals 1), objects by their keys.
func JSONEqual(a, b any) bool {
	if ra, ok := rat(a); ok {
		rb, ok := rat(b)
		return ok && ra.Cmp(rb) == 0
	}
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !JSONEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !JSONEqual(v, w) {
				return false
			}
		}
		return true
	}
	return a == b
}

func typeOK(t string, v any) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "integer":
		r, ok := rat(v)
		return ok && r.IsInt()
	case "number":
		return isNumber(v)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	}
	return true
}

func count(v any) (int, bool) {
	r, ok := rat(v)
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return int(r.Num().Int64()), true
}

func schemaErrors(schema, value any, path string) []string {
	if b, ok := schema.(bool); ok {
		if !b {
			return []string{where(path) + ": no value is allowed"}
		}
		return nil
	}
	s, ok := schema.(map[string]any)
	if !ok {
		return nil
	}
	var errs []string
	at := where(path)
	switch t := s["type"].(type) {
	case string:
		if !typeOK(t, value) {
			errs = append(errs, fmt.Sprintf("%s: not of type %s", at, t))
		}
	case []any:
		matched := false
		var names []string
		for _, x := range t {
			if name, ok := x.(string); ok {
				names = append(names, name)
				matched = matched || typeOK(name, value)
			}
		}
		if !matched {
			errs = append(errs, fmt.Sprintf("%s: not of any type [%s]", at, strings.Join(names, ", ")))
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		found := false
		for _, x := range enum {
			found = found || JSONEqual(value, x)
		}
		if !found {
			errs = append(errs, at+": not one of the enum values")
		}
	}
	if c, ok := s["const"]; ok && !JSONEqual(value, c) {
		errs = append(errs, at+": not the constant")
	}
	if obj, ok := value.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		if req, ok := s["required"].([]any); ok {
			for _, k := range req {
				if key, ok := k.(string); ok {
					if _, has := obj[key]; !has {
						errs = append(errs, fmt.Sprintf("%s: required property %q is missing", at, key))
					}
				}
			}
		}
		extra, hasExtra := s["additionalProperties"]
		for _, k := range sortedKeys(obj) {
			v := obj[k]
			if sub, ok := props[k]; ok {
				errs = append(errs, schemaErrors(sub, v, path+"/"+k)...)
			} else if hasExtra {
				if b, ok := extra.(bool); ok && !b {
					errs = append(errs, fmt.Sprintf("%s: additional property %q", at, k))
				} else if _, ok := extra.(map[string]any); ok {
					errs = append(errs, schemaErrors(extra, v, path+"/"+k)...)
				}
			}
		}
	}
	if arr, ok := value.([]any); ok {
		switch items := s["items"].(type) {
		case map[string]any, bool:
			for i, v := range arr {
				errs = append(errs, schemaErrors(items, v, fmt.Sprintf("%s/%d", path, i))...)
			}
		}
		if n, ok := count(s["minItems"]); ok && len(arr) < n {
			errs = append(errs, fmt.Sprintf("%s: fewer than %d items", at, n))
		}
		if n, ok := count(s["maxItems"]); ok && len(arr) > n {
			errs = append(errs, fmt.Sprintf("%s: more than %d items", at, n))
		}
	}
	if str, ok := value.(string); ok {
		// Lengths in characters (code points), as JSON Schema counts them.
		length := utf8.RuneCountInString(str)
		if n, ok := count(s["minLength"]); ok && length < n {
			errs = append(errs, fmt.Sprintf("%s: shorter than %d", at, n))
		}
		if n, ok := count(s["maxLength"]); ok && length > n {
			errs = append(errs, fmt.Sprintf("%s: longer than %d", at, n))
		}
	}
	if v, ok := rat(value); ok {
		for _, b := range []struct {
			key string
			bad func(int) bool
		}{
			{"minimum", func(c int) bool { return c < 0 }},
			{"maximum", func(c int) bool { return c > 0 }},
			{"exclusiveMinimum", func(c int) bool { return c <= 0 }},
			{"exclusiveMaximum", func(c int) bool { return c >= 0 }},
		} {
			if bound, ok := rat(s[b.key]); ok && b.bad(v.Cmp(bound)) {
				errs = append(errs, fmt.Sprintf("%s: %s %s", at, b.key, bound.RatString()))
			}
		}
	}
	if all, ok := s["allOf"].([]any); ok {
		for _, sub := range all {
			errs = append(errs, schemaErrors(sub, value, path)...)
		}
	}
	if anyOf, ok := s["anyOf"].([]any); ok {
		matched := false
		for _, sub := range anyOf {
			matched = matched || len(schemaErrors(sub, value, path)) == 0
		}
		if !matched {
			errs = append(errs, at+": matches none of anyOf")
		}
	}
	if not, ok := s["not"]; ok && len(schemaErrors(not, value, path)) == 0 {
		errs = append(errs, at+": matches the `not` schema")
	}
	return errs
}

func where(path string) string {
	if path == "" {
		return "/"
	}
	return path
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
