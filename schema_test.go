package hitl_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hitl-sh/hitl"
)

// webFormSchema has one field of every kind the web inbox renders.
const webFormSchema = `{
	"type": "object",
	"required": ["title", "start", "priority"],
	"properties": {
		"title":    {"type": "string", "minLength": 3, "maxLength": 20},
		"code":     {"type": "string", "pattern": "^[A-Z]{3}-[0-9]+$"},
		"priority": {"type": "string", "enum": ["low", "medium", "high"]},
		"start":    {"type": "string", "format": "date"},
		"at":       {"type": "string", "format": "date-time"},
		"email":    {"type": "string", "format": "email"},
		"link":     {"type": "string", "format": "uri"},
		"count":    {"type": "integer", "minimum": 1, "maximum": 10},
		"budget":   {"type": "number", "minimum": 0, "exclusiveMaximum": 1000.5},
		"urgent":   {"type": "boolean"},
		"labels":   {"type": "array", "items": {"type": "string", "enum": ["bug", "ops", "docs"]}, "uniqueItems": true},
		"owner":    {
			"type": "object",
			"required": ["name"],
			"properties": {
				"name":  {"type": "string", "minLength": 1},
				"phone": {"type": "string", "pattern": "^\\+?[0-9 ]+$"}
			}
		}
	}
}`

// webForm returns the minimal valid value for webFormSchema with the given
// fields added or replaced (a nil value removes the field).
func webForm(t *testing.T, fields map[string]any) string {
	t.Helper()
	v := map[string]any{"title": "Outage", "start": "2026-03-04", "priority": "high"}
	for k, f := range fields {
		if f == nil {
			delete(v, k)
		} else {
			v[k] = f
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFormSchema(t *testing.T) {
	t.Parallel()
	in := create(t, hitl.CreateRequest{Type: hitl.TypeForm, Question: "File an incident", FormSchema: json.RawMessage(webFormSchema)})

	type fields = map[string]any
	accept := []struct {
		name   string
		fields fields
	}{
		{"required only", nil},
		{"string lengths at bounds", fields{"title": "abc"}},
		{"string max length in characters", fields{"title": strings.Repeat("é", 20)}},
		{"pattern", fields{"code": "OPS-42"}},
		{"enum", fields{"priority": "low"}},
		{"date", fields{"start": "2024-02-29"}},
		{"date-time with offset", fields{"at": "2026-03-04T05:06:07+01:00"}},
		{"date-time UTC with fraction", fields{"at": "2026-03-04T05:06:07.123Z"}},
		{"email", fields{"email": "ada@example.com"}},
		{"uri", fields{"link": "https://example.com/runbook?x=1#y"}},
		{"integer bounds", fields{"count": 1}},
		{"integer written as 10.0", fields{"count": json.Number("10.0")}},
		{"number", fields{"budget": 1000.25}},
		{"number zero", fields{"budget": 0}},
		{"boolean", fields{"urgent": false}},
		{"array of enum strings", fields{"labels": []string{"bug", "docs"}}},
		{"empty array", fields{"labels": []string{}}},
		{"nested object", fields{"owner": fields{"name": "Ada", "phone": "+44 20 7946 0000"}}},
		{"extra field", fields{"note": "not in the schema"}},
	}
	for _, tt := range accept {
		t.Run("accept/"+tt.name, func(t *testing.T) {
			t.Parallel()
			raw := webForm(t, tt.fields)
			got, err := hitl.NormalizeAnswer(in, json.RawMessage(raw))
			if err != nil {
				t.Fatalf("NormalizeAnswer(%s): got error %v, want none", raw, err)
			}
			var a, b any
			if err := json.Unmarshal(got, &a); err != nil {
				t.Fatalf("output %s: %v", got, err)
			}
			_ = json.Unmarshal([]byte(raw), &b)
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("NormalizeAnswer(%s): got %s, want the same value", raw, got)
			}
		})
	}

	reject := []struct {
		name   string
		fields fields
		want   []string // substrings of the message; each names the field
	}{
		{"missing required", fields{"title": nil, "start": nil}, []string{"at /: missing properties 'title', 'start'"}},
		{"too short", fields{"title": "ab"}, []string{"at /title:", "minLength"}},
		{"too long", fields{"title": strings.Repeat("x", 21)}, []string{"at /title:", "maxLength"}},
		{"pattern", fields{"code": "ops-42"}, []string{"at /code:", "does not match pattern"}},
		{"not in enum", fields{"priority": "urgent"}, []string{"at /priority:", "value must be one of 'low', 'medium', 'high'"}},
		{"enum wrong case", fields{"priority": "High"}, []string{"at /priority:"}},
		{"date not a date", fields{"start": "tomorrow"}, []string{"at /start:", "is not valid date"}},
		{"date out of range", fields{"start": "2026-02-30"}, []string{"at /start:", "is not valid date"}},
		{"date with a time", fields{"start": "2026-03-04T10:00:00Z"}, []string{"at /start:", "is not valid date"}},
		{"date-time without zone", fields{"at": "2026-03-04T05:06:07"}, []string{"at /at:", "is not valid date-time"}},
		{"date-time only a date", fields{"at": "2026-03-04"}, []string{"at /at:", "is not valid date-time"}},
		{"email without @", fields{"email": "ada.example.com"}, []string{"at /email:", "is not valid email"}},
		{"uri relative", fields{"link": "runbook/outage"}, []string{"at /link:", "is not valid uri"}},
		{"integer fraction", fields{"count": 1.5}, []string{"at /count:", "want integer"}},
		{"integer below minimum", fields{"count": 0}, []string{"at /count:", "minimum"}},
		{"integer above maximum", fields{"count": 11}, []string{"at /count:", "maximum"}},
		{"integer as string", fields{"count": "3"}, []string{"at /count:", "got string, want integer"}},
		{"number negative", fields{"budget": -0.01}, []string{"at /budget:", "minimum"}},
		{"number at exclusive max", fields{"budget": 1000.5}, []string{"at /budget:", "exclusiveMaximum"}},
		{"boolean as string", fields{"urgent": "true"}, []string{"at /urgent:", "got string, want boolean"}},
		{"array item not in enum", fields{"labels": []string{"bug", "infra"}}, []string{"at /labels/1:", "value must be one of"}},
		{"array items repeat", fields{"labels": []string{"ops", "ops"}}, []string{"at /labels:", "equal"}},
		{"array as string", fields{"labels": "bug"}, []string{"at /labels:", "want array"}},
		{"nested missing required", fields{"owner": fields{"phone": "1"}}, []string{"at /owner:", "missing property 'name'"}},
		{"nested pattern", fields{"owner": fields{"name": "Ada", "phone": "call me"}}, []string{"at /owner/phone:"}},
		{"nested null", fields{"owner": json.RawMessage("null")}, []string{"at /owner:", "want object"}},
		{"several fields", fields{"title": "x", "count": 99, "urgent": 1}, []string{"at /count:", "at /title:", "at /urgent:"}},
	}
	for _, tt := range reject {
		t.Run("reject/"+tt.name, func(t *testing.T) {
			t.Parallel()
			raw := webForm(t, tt.fields)
			got, err := hitl.NormalizeAnswer(in, json.RawMessage(raw))
			if err == nil {
				t.Fatalf("NormalizeAnswer(%s): got %s, want an error", raw, got)
			}
			wantErr(t, err, hitl.ErrValue, tt.want...)
		})
	}
}

func TestFormErrorListIsBounded(t *testing.T) {
	t.Parallel()
	props := map[string]any{}
	value := map[string]any{}
	for i := range 15 {
		name := fmt.Sprintf("f%02d", i)
		props[name] = map[string]any{"type": "integer"}
		value[name] = "x"
	}
	schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
	raw, _ := json.Marshal(value)
	in := create(t, hitl.CreateRequest{Type: hitl.TypeForm, Question: "q", FormSchema: schema})
	_, err := hitl.NormalizeAnswer(in, raw)
	wantErr(t, err, hitl.ErrValue, "at /f00:", "at /f09:", "and 5 more")
	if msg := hitl.ErrorMessage(err); strings.Contains(msg, "/f10") {
		t.Errorf("got message %q, want at most 10 fields listed", msg)
	}
}

func TestCompileSchemaFormats(t *testing.T) {
	t.Parallel()
	// Formats are asserted even under older drafts, where they are only
	// annotations by default.
	in := create(t, hitl.CreateRequest{Type: hitl.TypeForm, Question: "q", FormSchema: json.RawMessage(`{
		"$schema": "http://json-schema.org/draft-07/schema#",
		"type": "object",
		"properties": {"email": {"type": "string", "format": "email"}}
	}`)})
	_, err := hitl.NormalizeAnswer(in, json.RawMessage(`{"email":"nope"}`))
	wantErr(t, err, hitl.ErrValue, "at /email:", "is not valid email")
}

func TestCompileSchemaCached(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type":"object","properties":{"cached":{"type":"string"}}}`)
	a, err := hitl.CompileSchema(schema)
	if err != nil {
		t.Fatal(err)
	}
	b, err := hitl.CompileSchema(append(json.RawMessage(nil), schema...))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("compiling the same schema twice: got two compiled schemas, want the cached one")
	}
}

// TestCompileSchemaConcurrent shares schemas between goroutines, for the
// race detector.
func TestCompileSchemaConcurrent(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			schema := fmt.Sprintf(`{"type":"object","properties":{"n%d":{"type":"integer"}}}`, i%3)
			in, err := hitl.NewInteraction(hitl.CreateRequest{Type: hitl.TypeForm, Question: "q", FormSchema: json.RawMessage(schema)}, agent, now)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := hitl.NormalizeAnswer(in, json.RawMessage(fmt.Sprintf(`{"n%d":1}`, i%3))); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
