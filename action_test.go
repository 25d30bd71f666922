package hitl_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
)

// bashRequest is an action request for a Bash command.
func bashRequest(command string) hitl.CreateRequest {
	return hitl.CreateRequest{
		Type:        hitl.TypeAction,
		Action:      &hitl.Action{Name: "Bash", Args: json.RawMessage(`{"command": ` + quote(command) + `}`)},
		SourceAgent: "claude-code",
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestNewActionDefaults(t *testing.T) {
	t.Parallel()
	in := createJSON(t, `{
		"interaction_type": "action",
		"action": {"name": " Bash ", "args": {"command": "terraform apply",  "timeout": 600}, "description": "Apply the plan"},
		"source_agent": "claude-code"
	}`)
	if got, want := in.Question, "Run Bash?"; got != want {
		t.Errorf("Question: got %q, want %q", got, want)
	}
	if got, want := in.Action.Name, "Bash"; got != want {
		t.Errorf("Action.Name: got %q, want %q", got, want)
	}
	if got, want := string(in.Action.Args), `{"command":"terraform apply","timeout":600}`; got != want {
		t.Errorf("Action.Args: got %s, want %s (compact, in the agent's order)", got, want)
	}
	if got, want := in.Decisions, hitl.AllDecisions(); !slices.Equal(got, want) {
		t.Errorf("Decisions: got %v, want %v", got, want)
	}
	if in.RejectRequiresMessage {
		t.Error("RejectRequiresMessage: got true, want false")
	}
	if len(in.Options) != 0 {
		t.Errorf("Options: got %v, want none", in.Options)
	}

	// The interaction's JSON carries the fields back, false included.
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"action":                  `{"name":"Bash","args":{"command":"terraform apply","timeout":600},"description":"Apply the plan"}`,
		"decisions":               `["approve","edit","reject","respond"]`,
		"reject_requires_message": `false`,
		"question":                `"Run Bash?"`,
	} {
		if got := string(m[k]); got != want {
			t.Errorf("JSON %s: got %s, want %s", k, got, want)
		}
	}
	if _, ok := m["args_schema"]; ok {
		t.Errorf("JSON args_schema: present without a schema: %s", m["args_schema"])
	}

	// Read back, it is the same interaction.
	var back hitl.Interaction
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Action == nil || string(back.Action.Args) != string(in.Action.Args) || !slices.Equal(back.Decisions, in.Decisions) {
		t.Errorf("round trip: got %+v", back)
	}
}

func TestOtherTypesOmitActionFields(t *testing.T) {
	t.Parallel()
	in := create(t, hitl.CreateRequest{Question: "Deploy?", Type: hitl.TypeApproval})
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"action", "args_schema", "decisions", "reject_requires_message"} {
		if strings.Contains(string(b), `"`+k+`"`) {
			t.Errorf("an approval's JSON has %q: %s", k, b)
		}
	}
}

func TestNewActionOptions(t *testing.T) {
	t.Parallel()
	in := createJSON(t, `{
		"interaction_type": "action",
		"question": "Apply the Terraform plan?",
		"action": {"name": "Bash", "args": {"command": "terraform apply"}},
		"args_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
		"decisions": ["reject", "approve"],
		"reject_requires_message": true,
		"default_response": {"decision": "deny", "message": "nobody answered"}
	}`)
	if got, want := in.Question, "Apply the Terraform plan?"; got != want {
		t.Errorf("Question: got %q, want %q", got, want)
	}
	if got, want := in.Decisions, []hitl.Decision{"reject", "approve"}; !slices.Equal(got, want) {
		t.Errorf("Decisions: got %v, want %v", got, want)
	}
	if !in.RejectRequiresMessage {
		t.Error("RejectRequiresMessage: got false")
	}
	if got, want := string(in.ArgsSchema), `{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`; got != want {
		t.Errorf("ArgsSchema: got %s, want %s", got, want)
	}
	if got, want := string(in.DefaultResponse), `{"decision":"reject","message":"nobody answered"}`; got != want {
		t.Errorf("DefaultResponse: got %s, want %s (normalised)", got, want)
	}
	// No args: {}.
	in = createJSON(t, `{"interaction_type": "action", "action": {"name": "ListFiles"}}`)
	if got := string(in.Action.Args); got != "{}" {
		t.Errorf("Args without args: got %s, want {}", got)
	}
}

// TestActionArgsNeedNotMeetSchema: the proposal is shown as is; only an
// edit must be valid.
func TestActionArgsNeedNotMeetSchema(t *testing.T) {
	t.Parallel()
	createJSON(t, `{
		"interaction_type": "action",
		"action": {"name": "Bash", "args": {"cmd": 1}},
		"args_schema": {"type": "object", "required": ["command"]}
	}`)
}

func TestNewActionRejects(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", hitl.MaxActionArgsLen)
	tests := []struct {
		name string
		body string
		want string
	}{
		{"no action", `{"interaction_type": "action"}`, `needs "action"`},
		{"no name", `{"interaction_type": "action", "action": {"args": {}}}`, "action.name is required"},
		{"blank name", `{"interaction_type": "action", "action": {"name": "  "}}`, "action.name is required"},
		{"long name", `{"interaction_type": "action", "action": {"name": "` + strings.Repeat("é", 201) + `"}}`, "limited to 200 characters"},
		{"args array", `{"interaction_type": "action", "action": {"name": "Bash", "args": ["ls"]}}`, "action.args must be a JSON object"},
		{"args string", `{"interaction_type": "action", "action": {"name": "Bash", "args": "ls"}}`, "action.args must be a JSON object"},
		{"args twice", `{"interaction_type": "action", "action": {"name": "Bash", "args": {"command": "ls", "command": "rm -rf /"}}}`, `field "command" twice`},
		{"args too big", `{"interaction_type": "action", "action": {"name": "Bash", "args": {"command": "` + long + `"}}}`, "limited to 262144 bytes"},
		{"long description", `{"interaction_type": "action", "action": {"name": "Bash", "description": "` + strings.Repeat("d", 4097) + `"}}`, "action.description is limited"},
		{"bad decision", `{"interaction_type": "action", "action": {"name": "Bash"}, "decisions": ["approve", "maybe"]}`, `decisions[1] must be approve, edit, reject or respond; got "maybe"`},
		{"repeated decision", `{"interaction_type": "action", "action": {"name": "Bash"}, "decisions": ["approve", "approve"]}`, `"approve" appears twice`},
		{"options", `{"interaction_type": "action", "action": {"name": "Bash"}, "options": ["a", "b"]}`, "action takes no options"},
		{"form_schema", `{"interaction_type": "action", "action": {"name": "Bash"}, "form_schema": {"type": "object"}}`, "form_schema is only for interaction_type form"},
		{"bad args_schema", `{"interaction_type": "action", "action": {"name": "Bash"}, "args_schema": {"type": "string"}}`, `args_schema must describe an object`},
		{"args_schema not a schema", `{"interaction_type": "action", "action": {"name": "Bash"}, "args_schema": {"type": "object", "properties": {"a": {"type": 5}}}}`, "args_schema is not a valid JSON Schema"},
		{"bad default", `{"interaction_type": "action", "action": {"name": "Bash"}, "default_response": "maybe"}`, "default_response: decision must be one of"},
		{"default with always", `{"interaction_type": "action", "action": {"name": "Bash"}, "default_response": {"decision": "approve", "always": true}}`, "default_response: always makes a rule"},
		{"default not allowed", `{"interaction_type": "action", "action": {"name": "Bash"}, "decisions": ["approve"], "default_response": "reject"}`, "reject is not allowed for this action; allowed: approve"},
		{"wildcard agent", `{"interaction_type": "action", "action": {"name": "Bash"}, "source_agent": "*"}`, `source_agent "*" is reserved`},
		{"action on approval", `{"interaction_type": "approval", "question": "Q?", "action": {"name": "Bash"}}`, "only for interaction_type action"},
		{"decisions on free_text", `{"question": "Q?", "decisions": ["approve"]}`, "only for interaction_type action"},
		{"args_schema on form", `{"interaction_type": "form", "question": "Q?", "form_schema": {"type": "object"}, "args_schema": {"type": "object"}}`, "only for interaction_type action"},
		{"reject_requires_message on approval", `{"interaction_type": "approval", "question": "Q?", "reject_requires_message": true}`, "only for interaction_type action"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var req hitl.CreateRequest
			if err := json.Unmarshal([]byte(tt.body), &req); err != nil {
				t.Fatalf("decode: %v", err)
			}
			_, err := hitl.NewInteraction(req, agent, now)
			wantErr(t, err, hitl.ErrInvalid, tt.want)
		})
	}
}

// TestActionFingerprint: the idempotency fingerprint covers every field of
// an action, and leaves the other types' fingerprints as they were.
func TestActionFingerprint(t *testing.T) {
	t.Parallel()
	base := bashRequest("git status")
	hash := func(mod func(*hitl.CreateRequest)) string {
		req := base
		a := *base.Action
		req.Action = &a
		mod(&req)
		return create(t, req).RequestHash
	}
	same := hash(func(*hitl.CreateRequest) {})
	if got := hash(func(r *hitl.CreateRequest) { r.Action.Args = json.RawMessage(`{ "command" : "git status" }`) }); got != same {
		t.Error("white space in args changed the fingerprint")
	}
	for name, mod := range map[string]func(*hitl.CreateRequest){
		"args":        func(r *hitl.CreateRequest) { r.Action.Args = json.RawMessage(`{"command":"git push"}`) },
		"name":        func(r *hitl.CreateRequest) { r.Action.Name = "Shell" },
		"description": func(r *hitl.CreateRequest) { r.Action.Description = "look" },
		"args_schema": func(r *hitl.CreateRequest) { r.ArgsSchema = json.RawMessage(`{"type":"object"}`) },
		"decisions":   func(r *hitl.CreateRequest) { r.Decisions = []hitl.Decision{"approve", "reject"} },
		"reject_requires_message": func(r *hitl.CreateRequest) {
			r.RejectRequiresMessage = true
		},
	} {
		if hash(mod) == same {
			t.Errorf("%s: the fingerprint did not change", name)
		}
	}
	// Fingerprints stored before actions (computed by the code before
	// them) keep matching their repeats after an upgrade; a fingerprint
	// made now is the same hash, marked as covering the targets.
	for _, tt := range []struct {
		req  hitl.CreateRequest
		want string
	}{
		{hitl.CreateRequest{Question: "What next?"}, "643faf79f3752ac70ffd15505327df66a6f91d77792c1ad365591caad4aea14f"},
		{hitl.CreateRequest{Question: "Deploy?", Type: hitl.TypeApproval, Context: "ctx", DefaultResponse: json.RawMessage(`true`)}, "9719e595fdbf255d50c0c84d286f301ac26b2fc112bcf537a45f2c7b6ee8cc56"},
		{hitl.CreateRequest{Question: "Form?", Type: hitl.TypeForm, FormSchema: json.RawMessage(`{"type":"object"}`)}, "b0ec70050186b2a1e1948c494e5a069a10b998103021539ba79ee5269b348dc0"},
	} {
		in := create(t, tt.req)
		if !in.SameRequest(tt.want) || in.RequestHash != "v2:"+tt.want {
			t.Errorf("fingerprint of %q: got %s, want it to match %s (as before actions)", tt.req.Question, in.RequestHash, tt.want)
		}
	}
}

// TestInteractionJSONKeepsHTML: an encoder that does not escape HTML
// writes an interaction's text as it is, as before MarshalJSON existed;
// json.Marshal escapes it.
func TestInteractionJSONKeepsHTML(t *testing.T) {
	t.Parallel()
	for _, in := range []*hitl.Interaction{
		create(t, hitl.CreateRequest{Question: "Release <1.4> & more?"}),
		create(t, hitl.CreateRequest{Type: hitl.TypeAction, Action: &hitl.Action{Name: "Bash", Args: json.RawMessage(`{"command":"make <x> && y"}`)}}),
	} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(in); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), `\u003c`) || strings.Contains(b.String(), `\u0026`) {
			t.Errorf("unescaped encoder: %s", b.String())
		}
		m, _ := json.Marshal(in)
		if strings.Contains(string(m), "<") || strings.Contains(string(m), "&") {
			t.Errorf("json.Marshal: %s, want HTML escaped", m)
		}
	}
}
