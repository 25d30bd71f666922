package claudetest

import (
	"encoding/json"
	"slices"
	"testing"
)

// The PermissionRequest hook: it runs when Claude Code would ask a person,
// in plain -p too, before the answer is left to the SDK host or the
// --permission-prompt-tool.

func TestPermissionRequestInput(t *testing.T) {
	t.Parallel()
	api := NewAPI(t, bashTurns("echo hi > out.txt")...)
	hook := NewCommandHook(t, HookReply{Stdout: fixture(t, "permissionrequest-allow.json")})
	r := Run(t, Options{API: api, Prompt: "write hi", Settings: Hooks("PermissionRequest", "Bash", hook.Hook(0))})
	checkResult(t, r, false)
	inputs := hook.Inputs(t)
	if len(inputs) != 1 {
		t.Fatalf("the hook ran %d times; want 1", len(inputs))
	}
	in := object(t, inputs[0])
	for k, v := range map[string]any{"hook_event_name": "PermissionRequest", "tool_name": "Bash", "cwd": r.Dir, "session_id": r.Result.SessionID} {
		if in[k] != v {
			t.Errorf("input %s = %v; want %v", k, in[k], v)
		}
	}
	if _, ok := in["permission_suggestions"].([]any); !ok {
		t.Errorf("input has no permission_suggestions list: %s", inputs[0])
	}
	checkFixture(t, r, "permissionrequest-input.json", inputs[0])
}

func TestPermissionRequest(t *testing.T) {
	t.Parallel()
	const needsApproval = "Output redirection to '$CWD/out.txt' needs approval. The path is inside the working directories for this session ('$CWD'), and Claude Code asks before a shell command creates, changes or removes files there."
	const ran = "(Bash completed with no output)"
	cases := []struct {
		name  string
		reply HookReply
		args  []string
		calls int // how often the hook runs
		// wantOut is out.txt's content, "" for none; wantResult is the
		// tool_result the model gets.
		wantOut, wantResult string
	}{
		{name: "allow", reply: HookReply{Stdout: fixture(t, "permissionrequest-allow.json")}, calls: 1, wantOut: "hi\n", wantResult: ran},
		{name: "allow with updatedInput", reply: HookReply{Stdout: fixture(t, "permissionrequest-updated-input.json")}, calls: 1, wantOut: "changed\n", wantResult: ran},
		{name: "deny", reply: HookReply{Stdout: fixture(t, "permissionrequest-deny.json")}, calls: 1, wantResult: "denied by the test: a person said no"},
		// No decision: the question goes on to -p, which has nobody to ask.
		{name: "no decision", reply: HookReply{}, calls: 1, wantResult: needsApproval},
		{name: "exit 1", reply: HookReply{Stderr: "the hook failed", Exit: 1}, calls: 1, wantResult: needsApproval},
		{name: "crash", reply: HookReply{Crash: true}, calls: 1, wantResult: needsApproval},
		{name: "timeout", reply: HookReply{Hang: true}, calls: 1, wantResult: needsApproval},
		// Nothing to ask: the hook does not run.
		{name: "mode allows", reply: HookReply{Stdout: fixture(t, "permissionrequest-deny.json")}, args: []string{"--permission-mode", "acceptEdits"}, calls: 0, wantOut: "hi\n", wantResult: ran},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, bashTurns("echo hi > out.txt")...)
			hook := NewCommandHook(t, tc.reply)
			// Only the hook that hangs gets a short timeout (see
			// TestPreToolUse).
			timeout := 60
			if tc.reply.Hang {
				timeout = 1
			}
			r := Run(t, Options{API: api, Prompt: "write hi", Settings: Hooks("PermissionRequest", "Bash", hook.Hook(timeout)), Args: tc.args})
			checkResult(t, r, tc.wantOut == "")
			if n := len(hook.Inputs(t)); n != tc.calls {
				t.Errorf("the hook ran %d times; want %d", n, tc.calls)
			}
			if out, _ := readOut(t, r); out != tc.wantOut {
				t.Errorf("out.txt = %q; want %q", out, tc.wantOut)
			}
			if result, isError := toolResult(t, api, r); result != tc.wantResult || isError != (tc.wantOut == "") {
				t.Errorf("tool_result = %q (is_error %v)\nwant %q", result, isError, tc.wantResult)
			}
		})
	}
}

// controlRequest is the part of an SDK control_request the tests read.
type controlRequest struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
	Request   struct {
		Subtype   string `json:"subtype"`
		ToolName  string `json:"tool_name"`
		ToolUseID string `json:"tool_use_id"`
	} `json:"request"`
}

// TestPermissionRequestSDKHost runs the CLI as the Agent SDK does, with
// --permission-prompt-tool stdio: the hook and the host are asked at once,
// and the first answer wins.
func TestPermissionRequestSDKHost(t *testing.T) {
	t.Parallel()
	t.Run("the hook answers first", func(t *testing.T) {
		t.Parallel()
		api := NewAPI(t, bashTurns("echo hi > out.txt")...)
		hook := NewCommandHook(t, HookReply{Stdout: fixture(t, "permissionrequest-allow.json")})
		p := Start(t, Options{API: api, Prompt: "write hi", Stream: true,
			Settings: Hooks("PermissionRequest", "Bash", hook.Hook(0)), Args: []string{"--permission-prompt-tool", "stdio"}})
		// The host does not answer. If it was asked before the hook
		// answered, the hook's allow cancels its request.
		var asked, cancelled []string
		for {
			var msg controlRequest
			line := p.NextOfType("control_request", "control_cancel_request", "result")
			json.Unmarshal(line, &msg)
			if msg.Type == "result" {
				break
			}
			if msg.Type == "control_request" {
				asked = append(asked, msg.RequestID)
			} else {
				cancelled = append(cancelled, msg.RequestID)
				checkFixture(t, p.run, "sdk-control-cancel-request.json", line)
			}
		}
		if len(asked) > 1 || !slices.Equal(asked, cancelled) {
			t.Errorf("the host was asked %v and cancelled %v; want each request cancelled once", asked, cancelled)
		}
		r := p.Wait()
		checkResult(t, r, false)
		if out, _ := readOut(t, r); out != "hi\n" {
			t.Errorf("out.txt = %q; want the command's output (the hook allowed it)", out)
		}
	})
	t.Run("the host answers first", func(t *testing.T) {
		t.Parallel()
		api := NewAPI(t, bashTurns("echo hi > out.txt")...)
		hook := NewCommandHook(t, HookReply{Hang: true}) // until the host has answered
		p := Start(t, Options{API: api, Prompt: "write hi", Stream: true,
			Settings: Hooks("PermissionRequest", "Bash", hook.Hook(30)), Args: []string{"--permission-prompt-tool", "stdio"}})
		line := p.NextOfType("control_request")
		var req controlRequest
		json.Unmarshal(line, &req)
		if req.Request.Subtype != "can_use_tool" || req.Request.ToolName != "Bash" || req.Request.ToolUseID != "toolu_00" {
			t.Errorf("control_request = %s; want can_use_tool for Bash toolu_00", line)
		}
		checkFixture(t, p.run, "sdk-can-use-tool.json", line)
		response := map[string]any{"type": "control_response", "response": map[string]any{
			"subtype": "success", "request_id": req.RequestID,
			"response": map[string]any{"behavior": "deny", "message": "denied by the SDK host"},
		}}
		p.Send(response)
		p.NextOfType("result")
		r := p.Wait()
		checkResult(t, r, true)
		if result, _ := toolResult(t, api, r); result != "denied by the SDK host" {
			t.Errorf("tool_result = %q; want the host's message", result)
		}
		b, _ := json.Marshal(response)
		checkFixture(t, r, "sdk-control-response-deny.json", b)
	})
}
