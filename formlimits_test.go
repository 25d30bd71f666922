package hitl_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
)

// nested returns a schema with n levels of open, then the innermost
// schema, then n levels of close.
func nested(open, inner, close string, n int) string {
	return `{"type":"object","properties":{"x":` + strings.Repeat(open, n) + inner + strings.Repeat(close, n) + `}}`
}

// refChain returns a schema whose $defs a1…an each apply the previous one
// twice (allOf of two $ref): an's subschemas double at every step.
func refChain(n int) string {
	defs := []string{`"a0": {"type": "integer"}`}
	for i := 1; i <= n; i++ {
		defs = append(defs, fmt.Sprintf(`"a%d": {"allOf": [{"$ref": "#/$defs/a%d"}, {"$ref": "#/$defs/a%d"}]}`, i, i-1, i-1))
	}
	return fmt.Sprintf(`{"type": "object", "$defs": {%s}, "properties": {"x": {"$ref": "#/$defs/a%d"}}}`, strings.Join(defs, ", "), n)
}

// propertyChain is refChain through properties: the value at depth n of
// {"x": {"x": …}} gets 2^n subschemas.
func propertyChain(n int) string {
	defs := []string{`"a0": {"type": "integer"}`}
	for i := 1; i <= n; i++ {
		p := fmt.Sprintf(`{"properties": {"x": {"$ref": "#/$defs/a%d"}}}`, i-1)
		defs = append(defs, fmt.Sprintf(`"a%d": {"allOf": [%s, %s]}`, i, p, p))
	}
	return fmt.Sprintf(`{"type": "object", "$defs": {%s}, "allOf": [{"$ref": "#/$defs/a%d"}]}`, strings.Join(defs, ", "), n)
}

// wide returns a schema with n properties.
func wide(n int) string {
	props := make([]string, n)
	for i := range props {
		props[i] = fmt.Sprintf(`"f%d": {"type": "string", "title": "Field %d"}`, i, i)
	}
	return `{"type": "object", "properties": {` + strings.Join(props, ", ") + `}}`
}

// allOf returns a schema whose property x has an allOf of n subschemas.
func allOf(n int) string {
	parts := make([]string, n-1)
	for i := range parts {
		parts[i] = `{"type": "integer"}`
	}
	return `{"type": "object", "properties": {"x": {"allOf": [` + strings.Join(parts, ", ") + `]}}}`
}

// TestFormSchemaBounds checks the bounds on form_schema: each is refused
// past it, before compiling (a thousand nested allOf took seconds to
// compile, and a $ref chain of 22 took seconds per answer), and forms
// within them are accepted.
func TestFormSchemaBounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, schema, want string // want "" for accepted
	}{
		{"nested allOf at the bound", nested(`{"allOf":[`, `{}`, `]}`, 14), ""},
		{"nested allOf over the bound", nested(`{"allOf":[`, `{}`, `]}`, 15), "form_schema is nested more than 32 levels deep"},
		{"nested allOf, 4900 deep", nested(`{"allOf":[`, `{}`, `]}`, 4900), "form_schema is nested more than 32 levels deep"},
		{"nested properties at the bound", nested(`{"type":"object","properties":{"a":`, `{}`, `}}`, 14), ""},
		{"nested properties over the bound", nested(`{"type":"object","properties":{"a":`, `{}`, `}}`, 15), "form_schema is nested more than 32 levels deep"},
		{"too large", `{"type":"object","description":"` + strings.Repeat("d", hitl.MaxFormSchemaLen) + `"}`, "form_schema is limited to 65536 bytes; got 65570"},
		{"many fields", wide(400), ""},
		{"too many objects", wide(hitl.MaxSchemaObjects), "form_schema has more than 1000 objects (subschemas)"},
		{"allOf of 16", allOf(16), ""},
		{"allOf of 17", allOf(17), "form_schema applies more than 16 subschemas to one value (at /x/)"},
		{"$ref chain of 2", refChain(2), ""},
		{"$ref chain of 3", refChain(3), "form_schema applies more than 16 subschemas to one value (at /x/)"},
		{"$ref chain of 22", refChain(22), "form_schema applies more than 16 subschemas to one value (at /x/)"},
		{"$ref chain through properties", propertyChain(8), "form_schema applies more than 16 subschemas to one value (at /x/x/x/)"},
		{"a $ref loop", `{"type": "object", "$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}, "properties": {"x": {"$ref": "#/$defs/a"}}}`, "form_schema applies more than 16 subschemas"},
		{"a recursive tree", `{"type": "object", "$defs": {"node": {"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}, "properties": {"root": {"$ref": "#/$defs/node"}}}`, ""},
		{"$ref shared by many fields", `{"type": "object", "$defs": {"zip": {"type": "string", "pattern": "^[0-9]{5}$"}}, "properties": {` + strings.Repeat(`"a": {"$ref": "#/$defs/zip"}, `, 1) + `"b": {"$ref": "#/$defs/zip"}, "c": {"allOf": [{"$ref": "#/$defs/zip"}]}}}`, ""},
		{"$dynamicRef", `{"type": "object", "$dynamicAnchor": "meta", "properties": {"x": {"$dynamicRef": "#meta"}}}`, "form_schema may not use $dynamicRef or $recursiveRef"},
		{"a number out of range", `{"type": "object", "properties": {"n": {"type": "number", "minimum": 1e400}}}`, "form_schema has a number out of range: 1e400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := hitl.NewInteraction(hitl.CreateRequest{Type: hitl.TypeForm, Question: "q", FormSchema: json.RawMessage(tt.schema)}, agent, now)
			if tt.want == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			wantErr(t, err, hitl.ErrInvalid, tt.want)
		})
	}
}

// TestStoredSchemaOverTheBounds checks that a schema stored before the
// bounds existed is refused when an answer would compile it, quickly,
// rather than compiled for minutes at every answer (and after every
// restart, which empties the cache of compiled schemas).
func TestStoredSchemaOverTheBounds(t *testing.T) {
	t.Parallel()
	for _, schema := range []string{nested(`{"allOf":[`, `{}`, `]}`, 4900), refChain(30)} {
		in := &hitl.Interaction{Type: hitl.TypeForm, Question: "q", FormSchema: json.RawMessage(schema)}
		_, err := hitl.NormalizeAnswer(in, json.RawMessage(`{"x": 1}`))
		wantErr(t, err, hitl.ErrInvalid, "form_schema")
	}
}

// TestFormValueBounds checks the bounds on a form's answer: its size, and
// numbers the validator can hold (1e10000000 made it panic).
func TestFormValueBounds(t *testing.T) {
	t.Parallel()
	in := &hitl.Interaction{Type: hitl.TypeForm, FormSchema: json.RawMessage(`{"type": "object", "properties": {
		"n": {"type": "number", "minimum": 0, "multipleOf": 0.5},
		"list": {"type": "array", "items": {"type": "number", "maximum": 10}},
		"note": {"type": "string"}}}`)}
	tests := []struct{ value, want string }{
		{`{"n": 1e10000000}`, "at /n: number out of range"},
		{`{"n": 1e400}`, "at /n: number out of range"},
		{`{"list": [1, 2, -1e-999]}`, "at /list/2: number out of range"},
		{`{"n": 1e-10000000}`, "at /n: number out of range"},
		{`{"note": "` + strings.Repeat("x", hitl.MaxFormValueLen) + `"}`, "form value is limited to 65536 bytes; got 65548"},
	}
	for _, tt := range tests {
		_, err := hitl.NormalizeAnswer(in, json.RawMessage(tt.value))
		wantErr(t, err, hitl.ErrValue, tt.want)
	}
	for _, ok := range []string{`{"n": 1e300, "list": [1.5, -2e-300, 1e-400, 1E+0]}`, `{"note": "` + strings.Repeat("x", hitl.MaxFormValueLen-20) + `"}`} {
		if _, err := hitl.NormalizeAnswer(in, json.RawMessage(ok)); err != nil {
			t.Errorf("%.60s: %v", ok, err)
		}
	}
}
