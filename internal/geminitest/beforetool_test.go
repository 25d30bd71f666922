package geminitest

import (
	"strings"
	"testing"
)

// The BeforeTool command hook: what Gemini CLI writes to the hook's
// standard input for each kind of tool, and what it does with each answer,
// failures included.

func TestBeforeToolInput(t *testing.T) {
	t.Parallel()
	api := NewAPI(t, shellTurns("echo hi > out.txt")...)
	hook := NewCommandHook(t, HookReply{Stdout: fixture(t, "beforetool-allow.json")})
	r := Run(t, Options{API: api, Prompt: "write hi", Settings: Hooks("BeforeTool", "run_shell_command", hook.Hook(30000))})
	checkExit(t, r)
	in := onlyInput(t, hook)
	want := map[string]any{
		"session_id": r.Result.SessionID, "cwd": r.Dir, "hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
	}
	for k, v := range want {
		if in[k] != v {
			t.Errorf("input %s = %v; want %v", k, in[k], v)
		}
	}
	if ti, _ := in["tool_input"].(map[string]any); ti["command"] != "echo hi > out.txt" {
		t.Errorf("tool_input = %v; want the command as the model gave it", in["tool_input"])
	}
	if path, _ := in["transcript_path"].(string); !strings.HasPrefix(path, r.Home+"/.gemini/tmp/") {
		t.Errorf("transcript_path = %q; want a file under $HOME/.gemini/tmp", path)
	}
	checkFixture(t, r, "beforetool-input-shell.json", hook.Inputs(t)[0])
}

func TestBeforeTool(t *testing.T) {
	const ran = "Output: (empty)"
	const blocked = "Tool execution blocked: "
	deny := fixture(t, "beforetool-deny.json")
	cases := []struct {
		name    string
		reply   HookReply
		command string // the hook's command line, when not the recording script
		timeout int    // the hook's timeout in milliseconds; 0 means 30,000
		// wantOut is out.txt's content, "" for none (the command did not
		// run); wantResponse is what the model is told: the output holds
		// it when the command ran, the error is it when it was blocked.
		wantOut, wantResponse string
	}{
		{name: "no output", reply: HookReply{}, wantOut: "hi\n", wantResponse: ran},
		{name: "empty object", reply: HookReply{Stdout: "{}"}, wantOut: "hi\n", wantResponse: ran},
		{name: "allow", reply: HookReply{Stdout: fixture(t, "beforetool-allow.json")}, wantOut: "hi\n", wantResponse: ran},
		{name: "deny", reply: HookReply{Stdout: deny}, wantResponse: blocked + "denied by the test: no writing here"},
		{name: "block", reply: Decision(map[string]any{"decision": "block", "reason": "blocked by the test"}), wantResponse: blocked + "blocked by the test"},
		{name: "deny without a reason", reply: Decision(map[string]any{"decision": "deny"}), wantResponse: blocked + "No reason provided"},
		{name: "tool_input", reply: HookReply{Stdout: fixture(t, "beforetool-tool-input.json")}, wantOut: "changed\n",
			wantResponse: "</untrusted_context>\n\n[System] Tool input parameters were modified by a hook before execution."},
		{name: "tool_input with deny", reply: Decision(map[string]any{"decision": "deny", "reason": "no",
			"hookSpecificOutput": map[string]any{"tool_input": map[string]any{"command": "echo changed > out.txt"}}}), wantResponse: blocked + "no"},
		{name: "unknown decision", reply: Decision(map[string]any{"decision": "maybe", "reason": "?"}), wantOut: "hi\n", wantResponse: ran},
		{name: "approve", reply: Decision(map[string]any{"decision": "approve"}), wantOut: "hi\n", wantResponse: ran},
		// Claude Code's shape is not read.
		{name: "Claude Code's deny", reply: Decision(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "?"}}), wantOut: "hi\n", wantResponse: ran},
		// An exit status of 2 or more blocks with stderr as the reason,
		// unless stdout holds a decision: stdout is read whatever the exit.
		{name: "exit 2", reply: HookReply{Stderr: "blocked by exit 2", Exit: 2}, wantResponse: blocked + "blocked by exit 2"},
		{name: "exit 3", reply: HookReply{Stderr: "blocked by exit 3", Exit: 3}, wantResponse: blocked + "blocked by exit 3"},
		{name: "exit 2 with an allow", reply: HookReply{Stdout: fixture(t, "beforetool-allow.json"), Stderr: "blocked by exit 2", Exit: 2},
			wantOut: "hi\n", wantResponse: ran},
		{name: "exit 1 with a deny", reply: HookReply{Stdout: deny, Exit: 1}, wantResponse: blocked + "denied by the test: no writing here"},
		{name: "killed after a deny", reply: HookReply{Stdout: deny, Crash: true}, wantResponse: blocked + "denied by the test: no writing here"},
		// A missing program is the shell's exit 127: blocked.
		{name: "missing hook binary", command: "/nonexistent/hitl-hook", wantResponse: blocked + "bash: line 1: /nonexistent/hitl-hook: No such file or directory"},
		// These fail open: the call runs.
		{name: "exit 1", reply: HookReply{Stderr: "the hook failed", Exit: 1}, wantOut: "hi\n", wantResponse: ran},
		{name: "bad JSON", reply: HookReply{Stdout: `{"decision": "deny"`}, wantOut: "hi\n", wantResponse: ran},
		{name: "plain text", reply: HookReply{Stdout: "deny"}, wantOut: "hi\n", wantResponse: ran},
		{name: "crash", reply: HookReply{Crash: true}, wantOut: "hi\n", wantResponse: ran},
		{name: "timeout", reply: HookReply{Hang: true}, timeout: 1000, wantOut: "hi\n", wantResponse: ran},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, shellTurns("echo hi > out.txt")...)
			hook := NewCommandHook(t, tc.reply)
			command, timeout := hook.Command, tc.timeout
			if tc.command != "" {
				command = tc.command
			}
			if timeout == 0 {
				timeout = 30000
			}
			r := Run(t, Options{API: api, Prompt: "write hi", Settings: Hooks("BeforeTool", "run_shell_command", CommandHookConfig(command, timeout))})
			checkExit(t, r)
			if n := len(hook.Inputs(t)); tc.command == "" && n != 1 {
				t.Errorf("the hook ran %d times; want 1", n)
			}
			out, _ := readOut(t, r)
			if out != tc.wantOut {
				t.Errorf("out.txt = %q; want %q", out, tc.wantOut)
			}
			resp, isError := toolResponse(t, api, r, CallID(0))
			if isError != (tc.wantOut == "") || tc.wantOut != "" && !strings.Contains(resp, tc.wantResponse) || tc.wantOut == "" && resp != tc.wantResponse {
				t.Errorf("the model was told %q (error %v); want %q (error %v)", resp, isError, tc.wantResponse, tc.wantOut == "")
			}
		})
	}
}

// TestBeforeToolEndsRun: "ask" and "continue": false end a headless run
// at once, exit status 0, without running the call or asking the model
// again; "ask" leaves stdout empty (no JSON result at all).
func TestBeforeToolEndsRun(t *testing.T) {
	cases := []struct {
		name       string
		reply      HookReply
		wantStdout bool
		wantStderr string
	}{
		{name: "ask", reply: Decision(map[string]any{"decision": "ask", "reason": "asked by the test"})},
		{name: "continue false", reply: Decision(map[string]any{"continue": false, "stopReason": "stopped by the test"}),
			wantStdout: true, wantStderr: "Agent execution stopped by hook: stopped by the test"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, shellTurns("echo hi > out.txt")...)
			hook := NewCommandHook(t, tc.reply)
			r := Run(t, Options{API: api, Prompt: "write hi", Settings: Hooks("BeforeTool", "run_shell_command", hook.Hook(30000))})
			if r.ExitCode != 0 {
				t.Errorf("exit status %d; want 0", r.ExitCode)
			}
			if got := len(strings.TrimSpace(string(r.Stdout))) > 0; got != tc.wantStdout {
				t.Errorf("stdout %q; want output: %v", r.Stdout, tc.wantStdout)
			}
			if !strings.Contains(string(r.Stderr), tc.wantStderr) {
				t.Errorf("stderr does not hold %q", tc.wantStderr)
			}
			if _, written := readOut(t, r); written {
				t.Error("out.txt was written; want the call not run")
			}
			if n := len(api.Requests()); n != 1 {
				t.Errorf("the model was asked %d times; want once (the run ended at the hook)", n)
			}
		})
	}
}
