package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/chatfake"
	"github.com/hitl-sh/hitl/internal/opencodetest"
	"github.com/hitl-sh/hitl/internal/refused"
	"github.com/hitl-sh/hitl/internal/turns"
)

// hitl hook opencode through hitl's OpenCode plugin, against the real
// OpenCode (internal/opencodetest) and a real hitl server: the person's
// decision is what OpenCode does. Every run loads the plugin
// --print-plugin prints.

// openCodePlugin returns the plugin hitl hook opencode --print-plugin
// prints, run with the test's hitl binary, with a question timeout of
// 50 s and args, as Options.Plugins.
func openCodePlugin(t *testing.T, args ...string) map[string]string {
	t.Helper()
	cmd := exec.Command(hitlBin, append([]string{"hook", "opencode", "--print-plugin", "--timeout", "50s"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hitl hook opencode --print-plugin: %v\n%s", err, stderr.String())
	}
	return map[string]string{"hitl.js": stdout.String()}
}

// startOpenCode runs OpenCode in the background; the channel gets its
// output.
func startOpenCode(t *testing.T, opts opencodetest.Options) <-chan *opencodetest.Output {
	opencodetest.RequireBinary(t)
	return inBackground(t, func() *opencodetest.Output { return opencodetest.Run(t, opts) })
}

// openCodeTold returns what the model was told of call n.
func openCodeTold(t *testing.T, api *chatfake.API, r *opencodetest.Output, n int) string {
	t.Helper()
	told, ok := api.ToolResult(chatfake.CallID(n))
	if !ok {
		t.Fatalf("the model got no result for %s (exit %d)\n%s\n%s", chatfake.CallID(n), r.ExitCode, r.Stdout, r.Stderr)
	}
	return told
}

func TestOpenCodeHookApprove(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := opencodetest.NewAPI(t, opencodetest.Bash("echo hi > out.txt"), chatfake.Text("finished"))
	done := startOpenCode(t, opencodetest.Options{API: api, Prompt: "write hi", Plugins: openCodePlugin(t), Env: h.env()})
	in := h.answer(t, `"approve"`)
	r := <-done
	if out, _ := agentFile(t, r.Dir, "out.txt"); out != "hi\n" {
		t.Errorf("out.txt = %q, want the approved command's output (exit %d)", out, r.ExitCode)
	}
	if told := openCodeTold(t, api, r, 0); told != "(no output)" {
		t.Errorf("the model was told %q, want the command's output", told)
	}
	if in.SourceAgent != "opencode" || in.Action.Name != "bash" || in.Action.Kind != hitl.KindShell || in.CreatedBy != "claude" {
		t.Errorf("asked by %q (%s): %+v; want opencode's bash, a shell action", in.SourceAgent, in.CreatedBy, in.Action)
	}
	var input struct{ Command, Cwd string }
	json.Unmarshal(in.Action.Input, &input)
	if input.Command != "echo hi > out.txt" || input.Cwd != r.Dir {
		t.Errorf("kind input %s, want the command and OpenCode's directory %s", in.Action.Input, r.Dir)
	}
	if in.SessionID != r.SessionID() || in.IdempotencyKey != "opencode:"+in.SessionID+":call_00" || !strings.HasPrefix(in.Context, "OpenCode asks to run **bash**") {
		t.Errorf("session %q, idempotency_key %q, context %q; want the run's session and the call id", in.SessionID, in.IdempotencyKey, in.Context)
	}
}

// TestOpenCodeHookDeny: a reject or a reply stops the call, and the model
// reads the person's words.
func TestOpenCodeHookDeny(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	cases := []struct{ name, answer, want string }{
		{"reject", `{"decision": "reject", "message": "not in this repository"}`,
			"The person reviewing this bash call in hitl (alice) rejected it: not in this repository"},
		{"respond", `{"decision": "respond", "message": "use the Makefile target instead"}`,
			"The person reviewing this bash call in hitl (alice) did not let it run, and replied: use the Makefile target instead"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			turns.Parallel(t)
			h := startClaudeHitl(t)
			api := opencodetest.NewAPI(t, opencodetest.Bash("echo hi > out.txt"), chatfake.Text("finished"))
			done := startOpenCode(t, opencodetest.Options{API: api, Prompt: "write hi", Plugins: openCodePlugin(t), Env: h.env()})
			h.answer(t, tc.answer)
			r := <-done
			if out, ok := agentFile(t, r.Dir, "out.txt"); ok {
				t.Errorf("out.txt = %q, want none: the call was denied", out)
			}
			if got := openCodeTold(t, api, r, 0); got != tc.want {
				t.Errorf("the model was told %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestOpenCodeHookEdit: the person edits the command, or an MCP tool's
// arguments; OpenCode runs the edit.
func TestOpenCodeHookEdit(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := opencodetest.NewAPI(t, opencodetest.Bash("echo hi > out.txt"), chatfake.Text("finished"))
	done := startOpenCode(t, opencodetest.Options{API: api, Prompt: "write hi", Plugins: openCodePlugin(t), Env: h.env()})
	h.answer(t, `{"decision": "edit", "args": {"command": "echo edited > edited.txt", "description": "Edited"}}`)
	r := <-done
	if out, ok := agentFile(t, r.Dir, "out.txt"); ok {
		t.Errorf("out.txt = %q, want none: the edited command ran instead", out)
	}
	if out, _ := agentFile(t, r.Dir, "edited.txt"); out != "edited\n" {
		t.Errorf("edited.txt = %q, want the edited command's output (the model was told %q)", out, openCodeTold(t, api, r, 0))
	}
}

func TestOpenCodeHookEditMCP(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	srv := opencodetest.NewMCPServer(t)
	api := opencodetest.NewAPI(t, chatfake.Call("notes_note", map[string]any{"text": "from the model"}), chatfake.Text("finished"))
	done := startOpenCode(t, opencodetest.Options{API: api, Prompt: "note", Plugins: openCodePlugin(t, "--matcher", "^notes_"), Env: h.env(),
		Config: map[string]any{"mcp": map[string]any{"notes": srv.Config()}}})
	in := h.answer(t, `{"decision": "edit", "args": {"text": "from the person"}}`)
	r := <-done
	if in.Action.Kind != hitl.KindMCP || !strings.Contains(string(in.Action.Input), `"server":"notes","tool":"note"`) {
		t.Errorf("asked %s %s, want an mcp action of the notes server's note", in.Action.Kind, in.Action.Input)
	}
	if calls := srv.Calls(); len(calls) != 1 || string(calls[0]) != `{"text":"from the person"}` {
		t.Errorf("the server was called with %s, want the edit", calls)
	}
	if told := openCodeTold(t, api, r, 0); !strings.Contains(told, "noted: from the person") {
		t.Errorf("the model was told %q", told)
	}
}

// TestOpenCodeHookFailures: whenever hitl cannot decide, the call is
// denied and the model reads why.
func TestOpenCodeHookFailures(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	const prefix = "hitl could not get a decision on this bash call, so it is denied: "
	cases := []struct {
		name string
		env  func(h *claudeHitl) []string
		args []string
		want string // the start of what the model reads
	}{
		{name: "hitl down", env: func(h *claudeHitl) []string {
			return []string{"HITL_URL=" + refused.URL(t), "HITL_TOKEN=" + h.agentToken}
		}, want: prefix + "cannot reach the hitl server (POST http://127.0.0.1:"},
		{name: "no token", env: func(h *claudeHitl) []string { return []string{"HITL_URL=" + h.URL} },
			want: prefix + "hitl refused the credentials (authentication required"},
		{name: "nobody answers", args: []string{"--timeout", "1s"}, want: prefix + "nobody answered before the deadline."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			turns.Parallel(t)
			h := startClaudeHitl(t)
			env := h.env()
			if tc.env != nil {
				env = tc.env(h)
			}
			api := opencodetest.NewAPI(t, opencodetest.Bash("echo hi > out.txt"), chatfake.Text("finished"))
			r := opencodetest.Run(t, opencodetest.Options{API: api, Prompt: "write hi", Plugins: openCodePlugin(t, tc.args...), Env: env})
			if out, ok := agentFile(t, r.Dir, "out.txt"); ok {
				t.Errorf("out.txt = %q, want none: the call was denied", out)
			}
			if got := openCodeTold(t, api, r, 0); !strings.HasPrefix(got, tc.want) {
				t.Errorf("the model was told %q\nwant it to start with %q", got, tc.want)
			}
		})
	}
}
