package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/codextest"
	"github.com/hitl-sh/hitl/internal/refused"
	"github.com/hitl-sh/hitl/internal/turns"
)

// hitl hook codex as Codex's PreToolUse command hook, against the real
// Codex CLI (internal/codextest) and a real hitl server: the person's
// decision is what Codex does. Every run trusts the hook as
// --print-settings says to, with the lines it prints for config.toml.

// codexHook is what hitl hook codex --print-settings printed: hooks.json,
// and the config.toml lines that trust it.
type codexHook struct {
	hooks map[string]any
	trust string
	home  string // CODEX_HOME
}

// printCodexHook runs the test's hitl binary with hitl hook codex
// --print-settings, a question timeout of 50 s (the hook's: 110 s) and
// args, for a new CODEX_HOME.
func printCodexHook(t *testing.T, args ...string) *codexHook {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(hitlBin, append([]string{"hook", "codex", "--print-settings", "--timeout", "50s"}, args...)...)
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hitl hook codex --print-settings: %v\n%s", err, stderr.String())
	}
	h := &codexHook{home: home}
	if err := json.Unmarshal(stdout.Bytes(), &h.hooks); err != nil {
		t.Fatalf("--print-settings printed %s: %v", stdout.String(), err)
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(line, "[hooks.state.") || strings.HasPrefix(line, "trusted_hash = ") {
			h.trust += line + "\n"
		}
	}
	if h.trust == "" {
		t.Fatalf("--print-settings printed no trusted hash:\n%s", stderr.String())
	}
	return h
}

// run runs Codex with the hook trusted as printed, env its environment
// (where hitl is, the token), playing turns.
func (h *codexHook) run(t *testing.T, api *codextest.API, env []string) *codextest.Output {
	t.Helper()
	return codextest.Run(t, codextest.Options{API: api, Prompt: "do it", Hooks: h.hooks, Trust: codextest.NoTrust, Config: h.trust, Home: h.home, Env: env})
}

// start runs Codex in the background; the channel gets its output.
func (h *codexHook) start(t *testing.T, api *codextest.API, env []string) <-chan *codextest.Output {
	codextest.RequireBinary(t)
	return inBackground(t, func() *codextest.Output { return h.run(t, api, env) })
}

// codexTold returns what the model was told of call n.
func codexTold(t *testing.T, api *codextest.API, r *codextest.Output, n int) string {
	t.Helper()
	out, ok := api.ToolOutput(codextest.CallID(n))
	if !ok {
		t.Fatalf("the model got no output for %s (exit %d)\n%s", codextest.CallID(n), r.ExitCode, r.Stdout)
	}
	return out
}

// TestCodexHookTrusted: the lines --print-settings prints make Codex (its
// app server, as its /hooks review shows it) list the printed hook as
// trusted, running the hitl binary with a timeout a minute above the
// question's.
func TestCodexHookTrusted(t *testing.T) {
	turns.Parallel(t)
	h := printCodexHook(t)
	if err := os.WriteFile(filepath.Join(h.home, "hooks.json"), mustJSON(t, h.hooks), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.home, "config.toml"), []byte(codextest.Config("http://127.0.0.1:1")+h.trust), 0o644); err != nil {
		t.Fatal(err)
	}
	hooks := codextest.ListHooks(t, t.TempDir(), codextest.Env(h.home))
	if len(hooks) != 1 {
		t.Fatalf("Codex lists %v, want one hook", hooks)
	}
	got := hooks[0]
	if got.TrustStatus != "trusted" || got.Command != hitlBin+" hook codex --timeout 50s" || got.TimeoutSec != 110 ||
		got.Matcher == nil || *got.Matcher != "^(Bash|apply_patch)$" || got.EventName != "preToolUse" {
		t.Errorf("Codex lists %+v; want the printed hook, trusted, timeout 110 s", got)
	}
}

func TestCodexHookApprove(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	hook := printCodexHook(t)
	api := codextest.NewAPI(t, codextest.Exec("echo hi > out.txt"), codextest.Text("finished"))
	done := hook.start(t, api, h.env())
	in := h.answer(t, `"approve"`)
	r := <-done
	if out, _ := agentFile(t, r.Dir, "out.txt"); out != "hi\n" {
		t.Errorf("out.txt = %q, want the approved command's output", out)
	}
	if in.SourceAgent != "codex" || in.Action.Name != "Bash" || in.Action.Kind != hitl.KindShell || in.CreatedBy != "claude" {
		t.Errorf("asked by %q (%s): %+v; want codex's Bash, a shell action", in.SourceAgent, in.CreatedBy, in.Action)
	}
	var input struct{ Command, Cwd string }
	json.Unmarshal(in.Action.Input, &input)
	if input.Command != "echo hi > out.txt" || input.Cwd != r.Dir {
		t.Errorf("kind input %s, want the command and Codex's directory %s", in.Action.Input, r.Dir)
	}
	if in.SessionID == "" || in.IdempotencyKey != "codex:"+in.SessionID+":call_00" || !strings.HasPrefix(in.Context, "Codex asks to run **Bash**") {
		t.Errorf("session %q, idempotency_key %q, context %q; want Codex's session and call id", in.SessionID, in.IdempotencyKey, in.Context)
	}
}

// TestCodexHookDeny: a reject or a reply stops the call, and the model
// reads the person's words.
func TestCodexHookDeny(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	cases := []struct{ name, answer, want string }{
		{"reject", `{"decision": "reject", "message": "not in this repository"}`,
			"Command blocked by PreToolUse hook: The person reviewing this Bash call in hitl (alice) rejected it: not in this repository. Command: echo hi > out.txt"},
		{"respond", `{"decision": "respond", "message": "use the Makefile target instead"}`,
			"Command blocked by PreToolUse hook: The person reviewing this Bash call in hitl (alice) did not let it run, and replied: use the Makefile target instead. Command: echo hi > out.txt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			turns.Parallel(t)
			h := startClaudeHitl(t)
			hook := printCodexHook(t)
			api := codextest.NewAPI(t, codextest.Exec("echo hi > out.txt"), codextest.Text("finished"))
			done := hook.start(t, api, h.env())
			h.answer(t, tc.answer)
			r := <-done
			if out, ok := agentFile(t, r.Dir, "out.txt"); ok {
				t.Errorf("out.txt = %q, want none: the call was denied", out)
			}
			if got := codexTold(t, api, r, 0); got != tc.want {
				t.Errorf("the model was told %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestCodexHookEdit: the person edits the command; Codex runs the edit.
func TestCodexHookEdit(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	hook := printCodexHook(t)
	api := codextest.NewAPI(t, codextest.Exec("echo hi > out.txt"), codextest.Text("finished"))
	done := hook.start(t, api, h.env())
	h.answer(t, `{"decision": "edit", "args": {"command": "echo edited > edited.txt"}}`)
	r := <-done
	if out, ok := agentFile(t, r.Dir, "out.txt"); ok {
		t.Errorf("out.txt = %q, want none: the edited command ran instead", out)
	}
	if out, _ := agentFile(t, r.Dir, "edited.txt"); out != "edited\n" {
		t.Errorf("edited.txt = %q, want the edited command's output", out)
	}
}

// TestCodexHookFailures: whenever hitl cannot decide, the call is denied,
// and the model reads why.
func TestCodexHookFailures(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	cases := []struct {
		name string
		env  func(h *claudeHitl) []string
		args []string
		want string // the start of what the model reads
	}{
		{name: "hitl down", env: func(h *claudeHitl) []string {
			return []string{"HITL_URL=" + refused.URL(t), "HITL_TOKEN=" + h.agentToken}
		},
			want: "Command blocked by PreToolUse hook: hitl could not get a decision on this Bash call, so it is denied: cannot reach the hitl server (POST http://127.0.0.1:"},
		{name: "no token", env: func(h *claudeHitl) []string { return []string{"HITL_URL=" + h.URL} },
			want: "Command blocked by PreToolUse hook: hitl could not get a decision on this Bash call, so it is denied: hitl refused the credentials (authentication required"},
		{name: "nobody answers", args: []string{"--timeout", "1s"},
			want: "Command blocked by PreToolUse hook: hitl could not get a decision on this Bash call, so it is denied: nobody answered before the deadline."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			turns.Parallel(t)
			h := startClaudeHitl(t)
			env := h.env()
			if tc.env != nil {
				env = tc.env(h)
			}
			hook := printCodexHook(t, tc.args...)
			api := codextest.NewAPI(t, codextest.Exec("echo hi > out.txt"), codextest.Text("finished"))
			r := hook.run(t, api, env)
			if out, ok := agentFile(t, r.Dir, "out.txt"); ok {
				t.Errorf("out.txt = %q, want none: the call was denied", out)
			}
			if got := codexTold(t, api, r, 0); !strings.HasPrefix(got, tc.want) {
				t.Errorf("the model was told %q\nwant it to start with %q", got, tc.want)
			}
		})
	}
}

// mustJSON marshals v.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
