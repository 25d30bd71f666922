package claudetest

import (
	"strings"
	"testing"
)

// The PreToolUse command hook: what Claude Code writes to the hook's
// standard input, and what it does with each answer, failures included.

func TestPreToolUseInput(t *testing.T) {
	t.Parallel()
	api := NewAPI(t, bashTurns("echo hi > out.txt")...)
	hook := NewCommandHook(t, HookReply{Stdout: fixture(t, "pretooluse-allow.json")})
	r := Run(t, Options{API: api, Prompt: "write hi", Settings: Hooks("PreToolUse", "Bash", hook.Hook(0))})
	checkResult(t, r, false)
	inputs := hook.Inputs(t)
	if len(inputs) != 1 {
		t.Fatalf("the hook ran %d times; want 1", len(inputs))
	}
	in := object(t, inputs[0])
	want := map[string]any{
		"session_id": r.Result.SessionID, "cwd": r.Dir, "permission_mode": "default",
		"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_00",
	}
	for k, v := range want {
		if in[k] != v {
			t.Errorf("input %s = %v; want %v", k, in[k], v)
		}
	}
	if path, _ := in["transcript_path"].(string); !strings.HasPrefix(path, r.Home+"/.claude/projects/") {
		t.Errorf("transcript_path = %q; want a file under $HOME/.claude/projects", path)
	}
	checkFixture(t, r, "pretooluse-input.json", inputs[0])
}

func TestPreToolUse(t *testing.T) {
	t.Parallel()
	acceptEdits := []string{"--permission-mode", "acceptEdits"}
	const needsApproval = "Output redirection to '$CWD/out.txt' needs approval. The path is inside the working directories for this session ('$CWD'), and Claude Code asks before a shell command creates, changes or removes files there."
	const ran = "(Bash completed with no output)"
	cases := []struct {
		name  string
		reply HookReply
		args  []string // acceptEdits: without the hook, the command runs
		// wantOut is out.txt's content, "" for none; wantResult is the
		// tool_result the model gets ($HOOK is the hook's path).
		wantOut, wantResult string
	}{
		// Without a hook the default mode asks, and -p has nobody to ask.
		{name: "no decision, default mode", reply: HookReply{}, wantResult: needsApproval},
		{name: "allow", reply: HookReply{Stdout: fixture(t, "pretooluse-allow.json")}, wantOut: "hi\n", wantResult: ran},
		{name: "deny", reply: HookReply{Stdout: fixture(t, "pretooluse-deny.json")}, args: acceptEdits,
			wantResult: "PreToolUse:Bash hook error: denied by the test: no writing here"},
		{name: "ask", reply: HookReply{Stdout: fixture(t, "pretooluse-ask.json")}, args: acceptEdits,
			wantResult: "asked by the test: a person must look"},
		{name: "updatedInput", reply: HookReply{Stdout: fixture(t, "pretooluse-updated-input.json")}, wantOut: "changed\n", wantResult: ran},
		{name: "updatedInput without a decision", args: acceptEdits,
			reply:   Decision(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PreToolUse", "updatedInput": map[string]any{"command": "echo changed > out.txt"}}}),
			wantOut: "changed\n", wantResult: ran},
		{name: "exit 2 blocks", reply: HookReply{Stderr: "blocked by exit 2", Exit: 2}, args: acceptEdits,
			wantResult: "PreToolUse:Bash hook error: [$HOOK]: blocked by exit 2"},
		// A hook that fails is ignored: the mode and rules decide.
		{name: "exit 1", reply: HookReply{Stderr: "the hook failed", Exit: 1}, args: acceptEdits, wantOut: "hi\n", wantResult: ran},
		{name: "exit 1, default mode", reply: HookReply{Stderr: "the hook failed", Exit: 1}, wantResult: needsApproval},
		{name: "bad JSON", reply: HookReply{Stdout: `{"hookSpecificOutput": {"permissionDecision": "deny"`}, args: acceptEdits, wantOut: "hi\n", wantResult: ran},
		{name: "crash", reply: HookReply{Crash: true}, args: acceptEdits, wantOut: "hi\n", wantResult: ran},
		// What the hook wrote counts, however it ends.
		{name: "killed after answering deny", reply: HookReply{Stdout: fixture(t, "pretooluse-deny.json"), Crash: true}, args: acceptEdits,
			wantResult: "PreToolUse:Bash hook error: denied by the test: no writing here"},
		{name: "timeout", reply: HookReply{Hang: true}, args: acceptEdits, wantOut: "hi\n", wantResult: ran},
		{name: "unknown decision", args: acceptEdits,
			reply:   Decision(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PreToolUse", "permissionDecision": "maybe", "permissionDecisionReason": "?"}}),
			wantOut: "hi\n", wantResult: ran},
		{name: "another event's output", args: acceptEdits,
			reply:   Decision(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PostToolUse", "permissionDecision": "deny", "permissionDecisionReason": "?"}}),
			wantOut: "hi\n", wantResult: ran},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, bashTurns("echo hi > out.txt")...)
			hook := NewCommandHook(t, tc.reply)
			// Only the hook that hangs gets a short timeout: on a busy
			// machine a hook that answers may take over a second to
			// start, and Claude Code would then ignore its answer.
			timeout := 60
			if tc.reply.Hang {
				timeout = 1
			}
			r := Run(t, Options{API: api, Prompt: "write hi", Settings: Hooks("PreToolUse", "Bash", hook.Hook(timeout)), Args: tc.args})
			checkResult(t, r, tc.wantOut == "")
			if n := len(hook.Inputs(t)); n != 1 {
				t.Errorf("the hook ran %d times; want 1", n)
			}
			out, _ := readOut(t, r)
			if out != tc.wantOut {
				t.Errorf("out.txt = %q; want %q", out, tc.wantOut)
			}
			result, isError := toolResult(t, api, r)
			result = strings.ReplaceAll(result, hook.Command, "$HOOK")
			if result != tc.wantResult || isError != (tc.wantOut == "") {
				t.Errorf("tool_result = %q (is_error %v)\nwant %q (is_error %v)", result, isError, tc.wantResult, tc.wantOut == "")
			}
		})
	}
}

// TestPreToolUseWrite: the hook sees the Write tool's input, and its
// updatedInput is what gets written.
func TestPreToolUseWrite(t *testing.T) {
	t.Parallel()
	api := NewAPI(t, ToolUse("Write", map[string]any{"file_path": "out.txt", "content": "from the model\n"}), Text("finished"))
	hook := NewCommandHook(t, Decision(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": "PreToolUse", "permissionDecision": "allow",
		"updatedInput": map[string]any{"file_path": "out.txt", "content": "from the hook\n"},
	}}))
	r := Run(t, Options{API: api, Prompt: "write", Settings: Hooks("PreToolUse", "Write", hook.Hook(0))})
	checkResult(t, r, false)
	if out, _ := readOut(t, r); out != "from the hook\n" {
		t.Errorf("out.txt = %q; want the hook's content", out)
	}
	inputs := hook.Inputs(t)
	if len(inputs) != 1 {
		t.Fatalf("the hook ran %d times; want 1", len(inputs))
	}
	in := object(t, inputs[0])
	if in["tool_name"] != "Write" {
		t.Errorf("tool_name = %v; want Write", in["tool_name"])
	}
	checkFixture(t, r, "pretooluse-input-write.json", inputs[0])
}
