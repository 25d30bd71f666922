package copilottest

import (
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/internal/chatfake"
)

// The preToolUse command hook: what Copilot CLI writes to the hook's
// standard input, and what it does with each answer, failures included.

func TestPreToolUseInput(t *testing.T) {
	t.Parallel()
	api := NewAPI(t, bashTurns("echo hi > out.txt")...)
	hook := NewCommandHook(t, HookReply{Stdout: fixture(t, "pretooluse-allow.json")})
	r := Run(t, Options{API: api, Prompt: "write hi", Settings: Hooks("preToolUse", "", hook.Hook(30))})
	checkExit(t, r)
	in := onlyInput(t, hook)
	want := map[string]any{"sessionId": r.SessionID(), "cwd": r.Dir, "toolName": "bash"}
	for k, v := range want {
		if in[k] != v {
			t.Errorf("input %s = %v; want %v", k, in[k], v)
		}
	}
	if args, _ := in["toolArgs"].(map[string]any); args["command"] != "echo hi > out.txt" {
		t.Errorf("toolArgs = %v; want the command as the model gave it, an object", in["toolArgs"])
	}
	checkFixture(t, r, "pretooluse-input-bash.json", hook.Inputs(t)[0])
}

func TestPreToolUse(t *testing.T) {
	const ran = "<shellId: 0 completed with exit code 0>"
	const denied = "Denied by preToolUse hook: "
	const errored = `Denied by preToolUse hook from "global settings" (hook errored)`
	deny := fixture(t, "pretooluse-deny.json")
	cases := []struct {
		name    string
		reply   HookReply
		command string // the hook's command line, when not the recording script
		timeout int    // the hook's timeoutSec; 0 means 30
		// wantOut is out.txt's content, "" for none (the command did not
		// run); wantTold is what the model is told: the whole of it when
		// the call was denied, a part of it when it ran.
		wantOut, wantTold string
	}{
		{name: "no output", reply: HookReply{}, wantOut: "hi\n", wantTold: ran},
		{name: "empty object", reply: HookReply{Stdout: "{}"}, wantOut: "hi\n", wantTold: ran},
		{name: "allow", reply: HookReply{Stdout: fixture(t, "pretooluse-allow.json")}, wantOut: "hi\n", wantTold: ran},
		{name: "deny", reply: HookReply{Stdout: deny}, wantTold: denied + "denied by the test: no writing here"},
		{name: "deny without a reason", reply: Decision(map[string]any{"permissionDecision": "deny"}), wantTold: denied + "No reason provided"},
		// Headless, ask is a deny.
		{name: "ask", reply: Decision(map[string]any{"permissionDecision": "ask", "permissionDecisionReason": "asked by the test"}),
			wantTold: "Denied by preToolUse hook (unable to ask user for confirmation): asked by the test"},
		{name: "modifiedArgs", reply: HookReply{Stdout: fixture(t, "pretooluse-modified-args.json")}, wantOut: "changed\n", wantTold: ran},
		{name: "modifiedArgs without a decision", reply: Decision(map[string]any{"modifiedArgs": map[string]any{"command": "echo changed > out.txt"}}),
			wantOut: "changed\n", wantTold: ran},
		{name: "modifiedArgs with deny", reply: Decision(map[string]any{"permissionDecision": "deny", "permissionDecisionReason": "no",
			"modifiedArgs": map[string]any{"command": "echo changed > out.txt"}}), wantTold: denied + "no"},
		// Only modifiedArgs is read, not Claude Code's updatedInput or its
		// hookSpecificOutput, nor Gemini CLI's decision.
		{name: "updatedInput", reply: Decision(map[string]any{"permissionDecision": "allow", "updatedInput": map[string]any{"command": "echo changed > out.txt"}}),
			wantOut: "hi\n", wantTold: ran},
		{name: "Claude Code's deny", reply: Decision(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "?"}}), wantOut: "hi\n", wantTold: ran},
		{name: "Gemini CLI's deny", reply: Decision(map[string]any{"decision": "deny", "reason": "?"}), wantOut: "hi\n", wantTold: ran},
		{name: "unknown decision", reply: Decision(map[string]any{"permissionDecision": "maybe"}), wantOut: "hi\n", wantTold: ran},
		// Any exit status but 0 denies, and stdout is not read; 2 says so.
		{name: "exit 2", reply: HookReply{Stderr: "blocked by exit 2", Exit: 2}, wantTold: denied + "hook exited with code 2"},
		{name: "exit 2 with an allow", reply: HookReply{Stdout: fixture(t, "pretooluse-allow.json"), Exit: 2}, wantTold: denied + "hook exited with code 2"},
		{name: "exit 1", reply: HookReply{Stderr: "the hook failed", Exit: 1}, wantTold: errored},
		{name: "exit 1 with a deny", reply: HookReply{Stdout: deny, Exit: 1}, wantTold: errored},
		{name: "exit 3", reply: HookReply{Exit: 3}, wantTold: errored},
		{name: "crash", reply: HookReply{Crash: true}, wantTold: errored},
		{name: "killed after a deny", reply: HookReply{Stdout: deny, Crash: true}, wantTold: errored},
		{name: "missing hook binary", command: "/nonexistent/hitl-hook", wantTold: errored},
		// These fail open: the call runs.
		{name: "bad JSON", reply: HookReply{Stdout: `{"permissionDecision": "deny"`}, wantOut: "hi\n", wantTold: ran},
		{name: "plain text", reply: HookReply{Stdout: "deny"}, wantOut: "hi\n", wantTold: ran},
		{name: "timeout", reply: HookReply{Hang: true}, timeout: 2, wantOut: "hi\n", wantTold: ran},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, bashTurns("echo hi > out.txt")...)
			hook := NewCommandHook(t, tc.reply)
			command, timeout := hook.Command, tc.timeout
			if tc.command != "" {
				command = tc.command
			}
			if timeout == 0 {
				timeout = 30
			}
			r := Run(t, Options{API: api, Prompt: "write hi", Settings: Hooks("preToolUse", "", CommandHookConfig(command, timeout))})
			checkExit(t, r)
			if n := len(hook.Inputs(t)); tc.command == "" && n != 1 {
				t.Errorf("the hook ran %d times; want 1", n)
			}
			if out, _ := readOut(t, r); out != tc.wantOut {
				t.Errorf("out.txt = %q; want %q", out, tc.wantOut)
			}
			told := toolResult(t, api, r, chatfake.CallID(0))
			if tc.wantOut != "" && !strings.Contains(told, tc.wantTold) || tc.wantOut == "" && told != tc.wantTold {
				t.Errorf("the model was told %q; want %q", told, tc.wantTold)
			}
		})
	}
}

// TestPreToolUsePermissions: a hook's allow runs the call without
// --allow-all-tools, and even when --deny-tool names the tool; a hook
// that decides nothing leaves the call to the CLI's own permissions,
// which headless deny what they would ask about.
func TestPreToolUsePermissions(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		reply    HookReply
		wantOut  string
		wantTold string
	}{
		{name: "allow, no --allow-all-tools", args: []string{}, reply: HookReply{Stdout: fixture(t, "pretooluse-allow.json")}, wantOut: "hi\n"},
		{name: "modifiedArgs, no --allow-all-tools", args: []string{}, reply: HookReply{Stdout: fixture(t, "pretooluse-modified-args.json")}, wantOut: "changed\n"},
		{name: "no decision, no --allow-all-tools", args: []string{}, reply: HookReply{Stdout: "{}"},
			wantTold: "Permission denied because no interactive user response was available."},
		{name: "allow, --deny-tool shell", args: []string{"--allow-all-tools", "--deny-tool", "shell"}, reply: HookReply{Stdout: fixture(t, "pretooluse-allow.json")}, wantOut: "hi\n"},
		{name: "no decision, --deny-tool shell", args: []string{"--allow-all-tools", "--deny-tool", "shell"}, reply: HookReply{Stdout: "{}"},
			wantTold: "Permission to run this tool was denied due to the following rules: `shell`"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, bashTurns("echo hi > out.txt")...)
			hook := NewCommandHook(t, tc.reply)
			r := Run(t, Options{API: api, Prompt: "write hi", Args: tc.args, Settings: Hooks("preToolUse", "", hook.Hook(30))})
			checkExit(t, r)
			if out, _ := readOut(t, r); out != tc.wantOut {
				t.Errorf("out.txt = %q; want %q", out, tc.wantOut)
			}
			if told := toolResult(t, api, r, chatfake.CallID(0)); !strings.Contains(told, tc.wantTold) {
				t.Errorf("the model was told %q; want it to hold %q", told, tc.wantTold)
			}
		})
	}
}
