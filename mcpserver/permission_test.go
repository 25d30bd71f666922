package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/tools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// permissionCall is a call of permission_prompt as Claude Code makes it.
func permissionCall(args any, toolUseID string) *mcp.CallToolParams {
	p := &mcp.CallToolParams{Name: tools.PermissionPromptName, Arguments: args}
	if toolUseID != "" {
		p.Meta = mcp.Meta{tools.PermissionPromptMetaKey: toolUseID}
	}
	return p
}

// decision decodes permission_prompt's result: never a tool error, one
// text item holding the decision's JSON.
func decision(t *testing.T, res *mcp.CallToolResult, err error) map[string]any {
	t.Helper()
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	if res.IsError {
		t.Fatalf("result is a tool error: %s", text(t, res))
	}
	var d map[string]any
	if err := json.Unmarshal([]byte(text(t, res)), &d); err != nil {
		t.Fatalf("text %q is not JSON: %v", text(t, res), err)
	}
	return d
}

func TestPermissionPrompt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, answer string
		want         map[string]any
	}{
		// updatedInput is the proposed input when it was not edited.
		{"approve", `"approve"`, map[string]any{"behavior": "allow", "updatedInput": map[string]any{"command": "make deploy"}}},
		{"edit", `{"decision": "edit", "args": {"command": "make deploy-staging"}}`, map[string]any{"behavior": "allow", "updatedInput": map[string]any{"command": "make deploy-staging"}}},
		{"reject", `{"decision": "reject", "message": "not on a Friday"}`, map[string]any{"behavior": "deny", "message": "The person reviewing this Bash call in hitl (local) rejected it: not on a Friday"}},
		{"respond", `{"decision": "respond", "message": "run make check first"}`, map[string]any{"behavior": "deny", "message": "The person reviewing this Bash call in hitl (local) did not let it run, and replied: run make check first"}},
	}
	for _, k := range kinds {
		for _, tc := range cases {
			t.Run(k.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t)
				s := k.connect(t, f)
				c := s.start(context.Background(), permissionCall(map[string]any{"tool_name": "Bash", "input": map[string]any{"command": "make deploy"}}, "toolu_01"))
				in := f.pending(t, 1)
				if in.Type != hitl.TypeAction || in.Action.Name != "Bash" || in.SourceAgent != clientName || in.IdempotencyKey != "claude-code:toolu_01" || in.CreatedVia != hitl.ChannelMCP {
					t.Errorf("asked %s %+v, source_agent %q, key %q, via %q", in.Type, in.Action, in.SourceAgent, in.IdempotencyKey, in.CreatedVia)
				}
				if _, err := f.person.Respond(context.Background(), in.ID, json.RawMessage(tc.answer)); err != nil {
					t.Fatalf("respond: %v", err)
				}
				res, err := c.wait(t)
				got := decision(t, res, err)
				if b, w := mustJSON(t, got), mustJSON(t, tc.want); b != w {
					t.Errorf("decision %s, want %s", b, w)
				}
			})
		}
	}
}

// TestPermissionPromptDeniesBadCalls: arguments that do not describe a
// tool call are denied, saying why, and nothing is asked.
func TestPermissionPromptDeniesBadCalls(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := connectHTTP(t, f.url+"/mcp", "")
	for _, args := range []any{
		map[string]any{"input": map[string]any{}},
		map[string]any{"tool_name": "Bash", "input": "ls"},
		map[string]any{"tool_name": 7, "input": map[string]any{}},
		map[string]any{"tool_name": "Bash", "input": map[string]any{"content": strings.Repeat("x", hitl.MaxActionArgsLen)}},
	} {
		res, err := s.CallTool(context.Background(), permissionCall(args, ""))
		d := decision(t, res, err)
		msg, _ := d["message"].(string)
		if d["behavior"] != "deny" || !strings.Contains(msg, "so it is denied") {
			t.Errorf("%v: decision %v, want a deny that says why", args, d)
		}
	}
	list, _, _ := f.broker.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending})
	if len(list) != 0 {
		t.Errorf("%d questions pending, want none", len(list))
	}
}

// TestPermissionPromptCancelled: Claude Code cancelling the call (another
// prompt answered first) withdraws the question.
func TestPermissionPromptCancelled(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := connectHTTP(t, f.url+"/mcp", "")
	ctx, cancel := context.WithCancel(context.Background())
	c := s.start(ctx, permissionCall(map[string]any{"tool_name": "Bash", "input": map[string]any{"command": "ls"}}, "toolu_02"))
	in := f.pending(t, 1)
	cancel()
	c.wait(t)
	wctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	got, err := f.broker.Wait(wctx, in.ID)
	if err != nil || got.Status != hitl.StatusCancelled {
		t.Fatalf("after the call was cancelled: %v, want the question cancelled", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
