package codextest

import (
	"strings"
	"testing"
)

// The PreToolUse command hook: what Codex writes to the hook's standard
// input for each kind of tool, and what it does with each answer,
// failures included.

// preToolUse returns a hook answer with hookSpecificOutput for PreToolUse:
// decision and reason when not "", updatedInput when not nil.
func preToolUse(decision, reason string, updatedInput any) HookReply {
	out := map[string]any{"hookEventName": "PreToolUse"}
	if decision != "" {
		out["permissionDecision"] = decision
	}
	if reason != "" {
		out["permissionDecisionReason"] = reason
	}
	if updatedInput != nil {
		out["updatedInput"] = updatedInput
	}
	return Decision(map[string]any{"hookSpecificOutput": out})
}

func TestPreToolUseInput(t *testing.T) {
	t.Parallel()
	api := NewAPI(t, execTurns("echo hi > out.txt")...)
	hook := NewCommandHook(t, HookReply{Stdout: fixture(t, "pretooluse-allow.json")})
	r := Run(t, Options{API: api, Prompt: "write hi", Hooks: Hooks("PreToolUse", "^Bash$", hook.Hook(30))})
	checkExit(t, r)
	in := onlyInput(t, hook)
	want := map[string]any{
		"cwd": r.Dir, "hook_event_name": "PreToolUse", "model": Model, "tool_name": "Bash",
		"tool_use_id": CallID(0), "permission_mode": "bypassPermissions",
	}
	for k, v := range want {
		if in[k] != v {
			t.Errorf("input %s = %v; want %v", k, in[k], v)
		}
	}
	if cmd, _ := in["tool_input"].(map[string]any); cmd["command"] != "echo hi > out.txt" {
		t.Errorf("tool_input = %v; want the command as the model gave it", in["tool_input"])
	}
	if path, _ := in["transcript_path"].(string); !strings.HasPrefix(path, r.Home+"/sessions/") {
		t.Errorf("transcript_path = %q; want a file under $CODEX_HOME/sessions", path)
	}
	checkFixture(t, r, "pretooluse-input-bash.json", hook.Inputs(t)[0])
}

func TestPreToolUse(t *testing.T) {
	const ran = "Process exited with code 0"
	const blocked = "Command blocked by PreToolUse hook: "
	const command = ". Command: echo hi > out.txt"
	deny := fixture(t, "pretooluse-deny.json")
	cases := []struct {
		name    string
		reply   HookReply
		command string // the hook's command line, when not the recording script
		timeout int    // the hook's timeout in seconds; 0 means 30
		// wantOut is out.txt's content, "" for none (the command did not
		// run); wantOutput is what the model is told: the output holds it
		// when the command ran, or is it when it was blocked.
		wantOut, wantOutput string
	}{
		{name: "no output", reply: HookReply{}, wantOut: "hi\n", wantOutput: ran},
		{name: "empty object", reply: HookReply{Stdout: "{}"}, wantOut: "hi\n", wantOutput: ran},
		{name: "allow", reply: HookReply{Stdout: fixture(t, "pretooluse-allow.json")}, wantOut: "hi\n", wantOutput: ran},
		{name: "deny", reply: HookReply{Stdout: deny}, wantOutput: blocked + "denied by the test: no writing here" + command},
		{name: "updatedInput", reply: HookReply{Stdout: fixture(t, "pretooluse-updated-input.json")}, wantOut: "changed\n", wantOutput: ran},
		// Codex reads permissionDecision only when it is deny, or allow
		// with updatedInput; anything else runs the original call.
		{name: "ask", reply: preToolUse("ask", "asked by the test", nil), wantOut: "hi\n", wantOutput: ran},
		{name: "unknown decision", reply: preToolUse("maybe", "?", nil), wantOut: "hi\n", wantOutput: ran},
		{name: "updatedInput without a decision", reply: preToolUse("", "", map[string]any{"command": "echo changed > out.txt"}), wantOut: "hi\n", wantOutput: ran},
		{name: "deny with updatedInput", reply: preToolUse("deny", "no", map[string]any{"command": "echo changed > out.txt"}), wantOut: "hi\n", wantOutput: ran},
		{name: "continue false", reply: Decision(map[string]any{"continue": false, "stopReason": "stop now"}), wantOut: "hi\n", wantOutput: ran},
		// Codex does not check hookEventName.
		{name: "another event's name", reply: Decision(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "PostToolUse", "permissionDecision": "deny", "permissionDecisionReason": "wrong event"}}),
			wantOutput: blocked + "wrong event" + command},
		// The older top-level shape blocks too; "approve" is ignored.
		{name: "decision block", reply: Decision(map[string]any{"decision": "block", "reason": "blocked the old way"}),
			wantOutput: blocked + "blocked the old way" + command},
		{name: "decision approve", reply: Decision(map[string]any{"decision": "approve", "reason": "fine"}), wantOut: "hi\n", wantOutput: ran},
		{name: "exit 2 blocks with stderr", reply: HookReply{Stderr: "blocked by exit 2", Exit: 2}, wantOutput: blocked + "blocked by exit 2" + command},
		{name: "exit 2 over an allow", reply: HookReply{Stdout: fixture(t, "pretooluse-allow.json"), Stderr: "blocked by exit 2", Exit: 2},
			wantOutput: blocked + "blocked by exit 2" + command},
		// Every other failure fails open: the call runs.
		{name: "exit 1", reply: HookReply{Stderr: "the hook failed", Exit: 1}, wantOut: "hi\n", wantOutput: ran},
		{name: "exit 1 after a deny", reply: HookReply{Stdout: deny, Exit: 1}, wantOut: "hi\n", wantOutput: ran},
		{name: "bad JSON", reply: HookReply{Stdout: `{"hookSpecificOutput": {"permissionDecision": "deny"`}, wantOut: "hi\n", wantOutput: ran},
		{name: "plain text", reply: HookReply{Stdout: "deny"}, wantOut: "hi\n", wantOutput: ran},
		{name: "crash", reply: HookReply{Crash: true}, wantOut: "hi\n", wantOutput: ran},
		{name: "killed after a deny", reply: HookReply{Stdout: deny, Crash: true}, wantOut: "hi\n", wantOutput: ran},
		{name: "timeout", reply: HookReply{Stdout: deny, Hang: true}, timeout: 1, wantOut: "hi\n", wantOutput: ran},
		{name: "missing hook binary", command: "/nonexistent/hitl-hook", wantOut: "hi\n", wantOutput: ran},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, execTurns("echo hi > out.txt")...)
			hook := NewCommandHook(t, tc.reply)
			command, timeout := hook.Command, tc.timeout
			if tc.command != "" {
				command = tc.command
			}
			if timeout == 0 {
				timeout = 30
			}
			r := Run(t, Options{API: api, Prompt: "write hi", Hooks: Hooks("PreToolUse", "^Bash$", CommandHookConfig(command, timeout))})
			checkExit(t, r)
			if n, want := len(hook.Inputs(t)), 1; tc.command == "" && n != want {
				t.Errorf("the hook ran %d times; want %d", n, want)
			}
			out, _ := readOut(t, r)
			if out != tc.wantOut {
				t.Errorf("out.txt = %q; want %q", out, tc.wantOut)
			}
			output := toolOutput(t, api, r)
			if tc.wantOut != "" && !strings.Contains(output, tc.wantOutput) || tc.wantOut == "" && output != tc.wantOutput {
				t.Errorf("the model was told %q; want %q", output, tc.wantOutput)
			}
		})
	}
}

// The file tools: Codex writes and edits files with apply_patch, whose
// input reaches the hook as tool_input.command (the patch).

const (
	addPatch    = "*** Begin Patch\n*** Add File: out.txt\n+from the model\n*** End Patch\n"
	updatePatch = "*** Begin Patch\n*** Update File: out.txt\n@@\n-old line\n+from the model\n*** End Patch\n"
)

func TestPreToolUseApplyPatch(t *testing.T) {
	cases := []struct {
		name, patch, fixture string
		files                map[string]string
	}{
		{name: "add a file", patch: addPatch, fixture: "pretooluse-input-apply-patch-add.json"},
		{name: "update a file", patch: updatePatch, fixture: "pretooluse-input-apply-patch-update.json",
			files: map[string]string{"out.txt": "old line\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, ApplyPatch(tc.patch), Text("finished"))
			hook := NewCommandHook(t, HookReply{Stdout: "{}"})
			r := Run(t, Options{API: api, Prompt: "write", Files: tc.files, Hooks: Hooks("PreToolUse", "^apply_patch$", hook.Hook(30))})
			checkExit(t, r)
			in := onlyInput(t, hook)
			if in["tool_name"] != "apply_patch" {
				t.Errorf("tool_name = %v; want apply_patch", in["tool_name"])
			}
			if ti, _ := in["tool_input"].(map[string]any); ti["command"] != tc.patch {
				t.Errorf("tool_input = %v; want {command: the patch}", in["tool_input"])
			}
			if out, _ := readOut(t, r); out != "from the model\n" {
				t.Errorf("out.txt = %q; want the patch applied", out)
			}
			checkFixture(t, r, tc.fixture, hook.Inputs(t)[0])
		})
	}
}

func TestPreToolUseApplyPatchAnswers(t *testing.T) {
	hookPatch := strings.ReplaceAll(addPatch, "from the model", "from the hook")
	cases := []struct {
		name       string
		reply      HookReply
		wantOut    string
		wantOutput string // what the output holds
	}{
		{name: "deny", reply: HookReply{Stdout: fixture(t, "pretooluse-deny.json")},
			wantOutput: "Command blocked by PreToolUse hook: denied by the test: no writing here. Command: " + addPatch},
		{name: "updatedInput", reply: preToolUse("allow", "", map[string]any{"command": hookPatch}),
			wantOut: "from the hook\n", wantOutput: "A out.txt"},
		{name: "exit 1", reply: HookReply{Exit: 1}, wantOut: "from the model\n", wantOutput: "A out.txt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, ApplyPatch(addPatch), Text("finished"))
			hook := NewCommandHook(t, tc.reply)
			r := Run(t, Options{API: api, Prompt: "write", Hooks: Hooks("PreToolUse", "^apply_patch$", hook.Hook(30))})
			checkExit(t, r)
			if out, _ := readOut(t, r); out != tc.wantOut {
				t.Errorf("out.txt = %q; want %q", out, tc.wantOut)
			}
			if output := toolOutput(t, api, r); !strings.Contains(output, tc.wantOutput) {
				t.Errorf("the model was told %q; want it to hold %q", output, tc.wantOutput)
			}
		})
	}
}

// TestPreToolUseMCP: an MCP server's tool reaches the hook as
// mcp__<server>__<tool> with its arguments; a deny keeps the call from the
// server, and updatedInput changes its arguments.
func TestPreToolUseMCP(t *testing.T) {
	cases := []struct {
		name       string
		reply      HookReply
		wantCalls  string // the server's calls, as JSON
		wantOutput string // what the output holds
	}{
		{name: "no decision", reply: HookReply{Stdout: "{}"}, wantCalls: `[{"text":"from the model"}]`, wantOutput: "noted: from the model"},
		{name: "deny", reply: HookReply{Stdout: fixture(t, "pretooluse-deny.json")}, wantCalls: `[]`,
			wantOutput: "Tool call blocked by PreToolUse hook: denied by the test: no writing here. Tool: mcp__notes__note"},
		{name: "updatedInput", reply: preToolUse("allow", "", map[string]any{"text": "from the hook"}),
			wantCalls: `[{"text":"from the hook"}]`, wantOutput: "noted: from the hook"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := NewMCPServer(t)
			api := NewAPI(t, ToolSearch("note"), MCPCall("notes", MCPToolName, map[string]any{"text": "from the model"}), Text("finished"))
			hook := NewCommandHook(t, tc.reply)
			r := Run(t, Options{API: api, Prompt: "note", Config: srv.Config("notes"), Hooks: Hooks("PreToolUse", "^mcp__", hook.Hook(30))})
			checkExit(t, r)
			in := onlyInput(t, hook)
			if in["tool_name"] != "mcp__notes__note" || in["tool_use_id"] != CallID(1) {
				t.Errorf("tool_name, tool_use_id = %v, %v; want mcp__notes__note, %s", in["tool_name"], in["tool_use_id"], CallID(1))
			}
			if got := "[" + joinJSON(srv.Calls()) + "]"; got != tc.wantCalls {
				t.Errorf("the server's calls = %s; want %s", got, tc.wantCalls)
			}
			output, ok := api.ToolOutput(CallID(1))
			if !ok || !strings.Contains(output, tc.wantOutput) {
				t.Errorf("the model was told %q; want it to hold %q", output, tc.wantOutput)
			}
			if tc.name == "no decision" {
				checkFixture(t, r, "pretooluse-input-mcp.json", hook.Inputs(t)[0])
			}
		})
	}
}
