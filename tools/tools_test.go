package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/hitl-sh/hitl"
)

// resolve compiles a schema with the library the MCP SDK validates with.
func resolve(t *testing.T, raw json.RawMessage) *jsonschema.Resolved {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("schema is not a JSON Schema: %v\n%s", err, raw)
	}
	r, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		t.Fatalf("resolve schema: %v", err)
	}
	return r
}

func TestSchemasCompile(t *testing.T) {
	t.Parallel()
	for _, tool := range All() {
		resolve(t, tool.InputSchema)
		if _, err := hitl.CompileSchema(tool.InputSchema); err != nil {
			t.Errorf("%s: input schema does not compile as 2020-12: %v", tool.Name, err)
		}
		if tool.OutputSchema != nil {
			resolve(t, tool.OutputSchema)
		}
		if tool.Description == "" || tool.Title == "" {
			t.Errorf("%s: missing title or description", tool.Name)
		}
	}
	if got, ok := Lookup(HumanFeedbackName); !ok || got.Name != HumanFeedbackName {
		t.Errorf("Lookup(%q) = %v, %v", HumanFeedbackName, got.Name, ok)
	}
	if _, ok := Lookup("nope"); ok {
		t.Errorf("Lookup(nope) found a tool")
	}
}

// TestSchemaAgreesWithRequest checks that what the published schema
// accepts, Request accepts, and what it refuses, Request refuses too.
func TestSchemaAgreesWithRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool  string
		args  string
		valid bool
	}{
		{HumanFeedbackName, `{"message_for_user": "Code?", "unique_id": "otp-1"}`, true},
		{HumanFeedbackName, `{"message_for_user": "Deploy?", "unique_id": "d-1", "options": ["Yes", "No"], "timeout_seconds": 1800}`, true},
		{HumanFeedbackName, `{"message_for_user": "Code?", "unique_id": "otp-1", "timeout_seconds": 30}`, true},
		{HumanFeedbackName, `{"message_for_user": "Code?", "unique_id": "otp-1", "timeout_seconds": 29}`, false},
		{HumanFeedbackName, `{"message_for_user": "Code?", "unique_id": "otp-1", "timeout_seconds": 1801}`, false},
		{HumanFeedbackName, `{"message_for_user": "Code?"}`, false},
		{HumanFeedbackName, `{"unique_id": "x"}`, false},
		{HumanFeedbackName, `{"message_for_user": "", "unique_id": "x"}`, false},
		{HumanFeedbackName, `{"message_for_user": "Code?", "unique_id": ""}`, false},
		{HumanFeedbackName, `{"message_for_user": "Code?", "unique_id": "` + strings.Repeat("k", 201) + `"}`, false},
		{HumanFeedbackName, `{"message_for_user": "Code?", "unique_id": "x", "options": [1]}`, false},
		{AskHumanName, `{"question": "Deploy?", "interaction_type": "approval"}`, true},
		{AskHumanName, `{"question": "Env?", "options": ["Staging", {"key": "prod", "label": "Production", "description": "careful"}], "timeout": 600}`, true},
		{AskHumanName, `{"question": "Details?", "interaction_type": "form", "form_schema": {"type": "object"}, "default_response": {}, "on_timeout": "default"}`, true},
		{AskHumanName, `{"question": "Quick?", "timeout": 1}`, true},
		{AskHumanName, `{"question": "Quick?", "timeout": 0.5}`, false},
		{AskHumanName, `{"question": "Slow?", "timeout": 86401}`, false},
		{AskHumanName, `{"interaction_type": "approval"}`, false},
		{AskHumanName, `{"question": "Env?", "options": [1]}`, false},
		{AskHumanName, `{"question": "Env?", "timeout": true}`, false},
		{AskHumanName, `{"question": "Deploy?", "interaction_type": "approval", "timeout": 3600, "escalation": [{"after": "10m", "remind": true, "channels": ["slack"]}, {"after": "30m", "add_targets": {"groups": ["oncall"]}, "only_between": "09:00-18:00", "tz": "Europe/Berlin", "weekdays": true}]}`, true},
		{AskHumanName, `{"question": "Deploy?", "escalation": []}`, true},
		{AskHumanName, `{"question": "Deploy?", "escalation": [{"remind": true}]}`, false},
		{AskHumanName, `{"question": "Deploy?", "escalation": [{"after": "10m", "channels": ["pager"]}]}`, false},
		{AskHumanName, `{"question": "Deploy?", "escalation": {"after": "10m"}}`, false},
		{HumanFeedbackName, `{"message_for_user": "Pick", "unique_id": "p", "options": ` + manyOptions(100) + `}`, true},
		{HumanFeedbackName, `{"message_for_user": "Pick", "unique_id": "p", "options": ` + manyOptions(101) + `}`, false},
		{AskHumanName, `{"question": "Pick", "options": ` + manyOptions(100) + `}`, true},
		{AskHumanName, `{"question": "Pick", "options": ` + manyOptions(101) + `}`, false},
		// additionalProperties: false, for both tools.
		{HumanFeedbackName, `{"message_for_user": "Code?", "unique_id": "otp-1", "urgent": true}`, false},
		{AskHumanName, `{"question": "Deploy?", "interaction_type": "approval", "targets": {"users": ["alice"]}}`, false},
	}
	for _, tt := range tests {
		tool, _ := Lookup(tt.tool)
		var v any
		if err := json.Unmarshal([]byte(tt.args), &v); err != nil {
			t.Fatalf("bad test args %s: %v", tt.args, err)
		}
		schemaErr := resolve(t, tool.InputSchema).Validate(v)
		_, reqErr := Request(tt.tool, json.RawMessage(tt.args))
		if got := schemaErr == nil; got != tt.valid {
			t.Errorf("%s %s: schema valid = %v (%v), want %v", tt.tool, tt.args, got, schemaErr, tt.valid)
		}
		if got := reqErr == nil; got != tt.valid {
			t.Errorf("%s %s: Request valid = %v (%v), want %v", tt.tool, tt.args, got, reqErr, tt.valid)
		}
	}
}

// manyOptions returns a JSON array of n distinct option strings.
func manyOptions(n int) string {
	opts := make([]string, n)
	for i := range opts {
		opts[i] = fmt.Sprintf("option %d", i)
	}
	b, _ := json.Marshal(opts)
	return string(b)
}

func TestRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		tool string
		args string
		want hitl.CreateRequest
	}{
		{"feedback text", HumanFeedbackName, `{"message_for_user": "Enter the code", "unique_id": " otp-1 "}`,
			hitl.CreateRequest{Type: hitl.TypeFreeText, Question: "Enter the code", IdempotencyKey: "otp-1", Timeout: 300}},
		{"feedback options", HumanFeedbackName, `{"message_for_user": "Deploy?", "unique_id": "d", "options": ["Yes, deploy", "No"], "timeout_seconds": "60"}`,
			hitl.CreateRequest{Type: hitl.TypeSingleChoice, Question: "Deploy?", IdempotencyKey: "d", Timeout: 60,
				Options: hitl.OptionList{{Key: "yes_deploy", Label: "Yes, deploy"}, {Key: "no", Label: "No"}}}},
		{"ask defaults to free text", AskHumanName, `{"question": "Why?"}`,
			hitl.CreateRequest{Type: hitl.TypeFreeText, Question: "Why?", Timeout: 300}},
		{"ask options make a choice", AskHumanName, `{"question": "Env?", "options": ["EU West"], "context": "ctx", "timeout": 30}`,
			hitl.CreateRequest{Type: hitl.TypeSingleChoice, Question: "Env?", Context: "ctx", Timeout: 30, Options: hitl.OptionList{{Key: "eu_west", Label: "EU West"}}}},
		{"ask schema makes a form; a schema in a string is accepted", AskHumanName, `{"question": "Name?", "form_schema": "{\"type\": \"object\"}", "default_response": {"a": 1}, "on_timeout": "default"}`,
			hitl.CreateRequest{Type: hitl.TypeForm, Question: "Name?", Timeout: 300, FormSchema: json.RawMessage(`{"type": "object"}`), DefaultResponse: json.RawMessage(`{"a": 1}`), OnTimeout: hitl.OnTimeoutDefault}},
		{"ask with an escalation", AskHumanName, `{"question": "Ok?", "timeout": 3600, "escalation": [{"after": "10m", "remind": true}, {"after": "30m", "add_targets": {"groups": ["oncall"]}}]}`,
			hitl.CreateRequest{Type: hitl.TypeFreeText, Question: "Ok?", Timeout: 3600, Escalation: []hitl.EscalationStep{
				{After: "10m", Remind: true}, {After: "30m", AddTargets: &hitl.Targets{Groups: []string{"oncall"}}}}}},
		{"ask opting out of the default escalation", AskHumanName, `{"question": "Ok?", "escalation": []}`,
			hitl.CreateRequest{Type: hitl.TypeFreeText, Question: "Ok?", Timeout: 300, Escalation: []hitl.EscalationStep{}}},
		{"ask explicit type wins", AskHumanName, `{"question": "Ok?", "interaction_type": "approval", "options": ["Ship", "Hold"]}`,
			hitl.CreateRequest{Type: hitl.TypeApproval, Question: "Ok?", Timeout: 300, Options: hitl.OptionList{{Key: "ship", Label: "Ship"}, {Key: "hold", Label: "Hold"}}}},
	}
	for _, tt := range tests {
		got, err := Request(tt.tool, json.RawMessage(tt.args))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestRequestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool, args, want string
		code             string
	}{
		{HumanFeedbackName, ``, "message_for_user is required", hitl.EINVALID},
		{HumanFeedbackName, `[1]`, "arguments must be a JSON object", hitl.EINVALID},
		{HumanFeedbackName, `{"message_for_user": "x"}`, "unique_id is required", hitl.EINVALID},
		{HumanFeedbackName, `{"message_for_user": "x", "unique_id": "y", "timeout_seconds": 5}`, "timeout_seconds must be between 30 and 1800; got 5", hitl.EINVALID},
		{HumanFeedbackName, `{"message_for_user": "x", "unique_id": "y", "timeout_seconds": "soon"}`, "timeout_seconds must be a number of seconds", hitl.EINVALID},
		{HumanFeedbackName, `{"message_for_user": "x", "unique_id": "y", "options": "a,b"}`, "options must be an array of strings", hitl.EINVALID},
		{HumanFeedbackName, `{"message_for_user": "x", "unique_id": "y", "options": ["a", " "]}`, "options[1] is empty", hitl.EINVALID},
		{AskHumanName, `{"question": " "}`, "question is required", hitl.EINVALID},
		{AskHumanName, `{"question": "q", "timeout": 100000}`, "timeout must be between 1 and 86400 seconds; got 100000", hitl.EINVALID},
		{AskHumanName, `{"question": "q", "form_schema": "not json"}`, "form_schema must be a JSON Schema object", hitl.EINVALID},
		{AskHumanName, `{"question": "q", "options": {"a": 1}}`, "options must be an array", hitl.EINVALID},
		{HumanFeedbackName, `{"message_for_user": "x", "unique_id": "y", "timeout": 60}`,
			`unknown argument "timeout": human_feedback takes message_for_user, unique_id, options and timeout_seconds`, hitl.EINVALID},
		{AskHumanName, `{"question": "q", "message_for_user": "x"}`,
			`unknown argument "message_for_user": ask_human takes question, interaction_type, options, context, timeout, form_schema, default_response, on_timeout, action, args_schema, decisions, reject_requires_message and escalation`, hitl.EINVALID},
		{"delete_everything", `{}`, `unknown tool "delete_everything"`, hitl.ENOTFOUND},
	}
	for _, tt := range tests {
		_, err := Request(tt.tool, json.RawMessage(tt.args))
		if got := hitl.ErrorCode(err); got != tt.code {
			t.Errorf("%s %s: code %q (%v), want %q", tt.tool, tt.args, got, err, tt.code)
		}
		if !strings.Contains(hitl.ErrorMessage(err), tt.want) {
			t.Errorf("%s %s: message %q, want it to contain %q", tt.tool, tt.args, hitl.ErrorMessage(err), tt.want)
		}
	}
}

func TestMarshal(t *testing.T) {
	t.Parallel()
	for _, f := range Formats {
		data, err := Marshal(f, All())
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var list []map[string]any
		if err := json.Unmarshal(data, &list); err != nil {
			t.Fatalf("%s: output is not a JSON array of objects: %v", f, err)
		}
		if len(list) != 3 {
			t.Fatalf("%s: %d tools, want 3", f, len(list))
		}
		for i, tool := range All() {
			got := list[i]
			var name any
			var schema any
			switch f {
			case FormatOpenAI:
				if got["type"] != "function" {
					t.Errorf("openai: type = %v, want function", got["type"])
				}
				fn, _ := got["function"].(map[string]any)
				name, schema = fn["name"], fn["parameters"]
			case FormatAnthropic:
				name, schema = got["name"], got["input_schema"]
			case FormatMCP:
				name, schema = got["name"], got["inputSchema"]
				if _, ok := got["outputSchema"]; ok != (tool.OutputSchema != nil) {
					t.Errorf("mcp %s: outputSchema present = %v, want %v", tool.Name, ok, tool.OutputSchema != nil)
				}
			}
			if name != tool.Name {
				t.Errorf("%s: tool %d name = %v, want %s", f, i, name, tool.Name)
			}
			var want any
			_ = json.Unmarshal(tool.InputSchema, &want)
			if diff := cmp.Diff(want, schema); diff != "" {
				t.Errorf("%s %s: schema (-want +got):\n%s", f, tool.Name, diff)
			}
		}
	}
	if _, err := Marshal("gemini", All()); err == nil {
		t.Errorf("unknown format: err = nil, want an error")
	}
	if data, err := Marshal(FormatOpenAI, nil); err != nil || string(data) != "[]" {
		t.Errorf("no tools: %s, %v; want []", data, err)
	}
}
