package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/tools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAskHumanAction: ask_human with interaction_type action, over every
// transport, with the official SDK's client: the person edits the
// arguments, and the result carries the decision.
func TestAskHumanAction(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			s := k.connect(t, f)
			c := s.start(context.Background(), &mcp.CallToolParams{Name: tools.AskHumanName, Arguments: map[string]any{
				"question":         "Apply the plan?",
				"interaction_type": "action",
				"action":           map[string]any{"name": "Bash", "args": map[string]any{"command": "terraform apply"}, "description": "Apply it"},
				"args_schema":      map[string]any{"type": "object", "required": []any{"command"}},
				"decisions":        []any{"approve", "edit", "reject"},
				"timeout":          600,
			}})
			in := f.pending(t, 1)
			if in.Type != hitl.TypeAction || in.Action.Name != "Bash" || in.SourceAgent != clientName || len(in.Decisions) != 3 || in.ArgsSchema == nil {
				t.Errorf("asked %+v (action %+v)", in, in.Action)
			}
			if _, err := f.person.Respond(context.Background(), in.ID, json.RawMessage(`{"decision":"edit","args":{"command":"terraform plan"}}`)); err != nil {
				t.Fatalf("respond: %v", err)
			}
			res, err := c.wait(t)
			if err != nil {
				t.Fatalf("call tool: %v", err)
			}
			if res.IsError {
				t.Fatalf("isError: %s", text(t, res))
			}
			if got, want := text(t, res), `Approved with edits: run Bash with these arguments instead: {"command":"terraform plan"}`; !strings.HasPrefix(got, want) {
				t.Errorf("text = %q, want it to start %q", got, want)
			}
			var got map[string]any
			data, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatalf("structured content %s: %v", data, err)
			}
			want := map[string]any{"status": "answered", "value": map[string]any{"decision": "edit", "args": map[string]any{"command": "terraform plan"}},
				"responded_by": hitl.LocalCaller, "channel": hitl.ChannelWeb, "interaction_id": in.ID}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("structured content (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAskHumanActionRejected: a rejection is an answer (not a tool
// error) whose text tells the model not to run the tool, and why; an
// action without its action is an error the model can read.
func TestAskHumanActionRejected(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := kinds[0].connect(t, f)
	c := s.start(context.Background(), &mcp.CallToolParams{Name: tools.AskHumanName, Arguments: map[string]any{
		"question": "Delete the branch?",
		"action":   map[string]any{"name": "Bash", "args": `{"command": "git branch -D main"}`},
	}})
	in := f.pending(t, 1)
	if in.Type != hitl.TypeAction || string(in.Action.Args) != `{"command":"git branch -D main"}` {
		t.Errorf("asked %+v: an action is inferred, args given as a string unwrapped", in.Action)
	}
	if _, err := f.person.Respond(context.Background(), in.ID, json.RawMessage(`{"decision":"reject","message":"main is protected"}`)); err != nil {
		t.Fatal(err)
	}
	res, err := c.wait(t)
	if err != nil || res.IsError {
		t.Fatalf("call: %v %v", err, res)
	}
	if got := text(t, res); !strings.HasPrefix(got, "Rejected: do not run Bash. Reason: main is protected") {
		t.Errorf("text = %q", got)
	}
	res, err = s.CallTool(context.Background(), &mcp.CallToolParams{Name: tools.AskHumanName, Arguments: map[string]any{
		"question": "Run it?", "interaction_type": "action",
	}})
	if err != nil || !res.IsError || !strings.Contains(text(t, res), `needs "action"`) {
		t.Errorf("an action without action: %v %v", err, res)
	}
}
