package codextest

import (
	"path/filepath"

	"github.com/hitl-sh/hitl/agents"
	"github.com/hitl-sh/hitl/internal/agenttest"
	"strings"
	"testing"
)

// Hook trust: Codex runs a hook from a user's hooks.json only when its hash
// is recorded as trusted, or with --dangerously-bypass-hook-trust; an
// untrusted hook is skipped without a word.

func TestHookTrust(t *testing.T) {
	cases := []struct {
		name     string
		trust    Trust
		wantRuns bool
	}{
		{name: "bypassed", trust: BypassTrust, wantRuns: true},
		{name: "stored", trust: StoredTrust, wantRuns: true},
		{name: "computed", trust: ComputedTrust, wantRuns: true},
		{name: "untrusted", trust: NoTrust, wantRuns: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, execTurns("echo hi > out.txt")...)
			hook := NewCommandHook(t, HookReply{Stdout: fixture(t, "pretooluse-deny.json")})
			r := Run(t, Options{API: api, Prompt: "write hi", Trust: tc.trust, Hooks: Hooks("PreToolUse", "^Bash$", hook.Hook(30))})
			checkExit(t, r)
			if ran := len(hook.Inputs(t)) == 1; ran != tc.wantRuns {
				t.Errorf("the hook ran: %v; want %v", ran, tc.wantRuns)
			}
			if _, written := readOut(t, r); written == tc.wantRuns {
				t.Errorf("out.txt written: %v; want %v (the hook denies)", written, !tc.wantRuns)
			}
			// Skipped silently: nothing in the output names a hook.
			if !tc.wantRuns && strings.Contains(string(r.Stdout)+string(r.Stderr), "hook") {
				t.Errorf("codex mentioned a hook:\n%s\n%s", r.Stdout, r.Stderr)
			}
		})
	}
}

// TestHookList: the app server lists a hook with its key, hash, trust and
// timeout (600 seconds when none is set); trusting it records the hash in
// config.toml, and changing the hook makes it "modified" (untrusted again).
func TestHookList(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	env := Env(home)
	hooksFile := filepath.Join(home, "hooks.json")
	agenttest.WriteFile(t, filepath.Join(home, "config.toml"), []byte(Config("http://127.0.0.1:1")))
	agenttest.WriteJSONFile(t, hooksFile, Hooks("PreToolUse", "^Bash$", CommandHookConfig("/usr/bin/true", 0)))

	hooks := ListHooks(t, dir, env)
	if len(hooks) != 1 {
		t.Fatalf("hooks/list = %v; want one hook", hooks)
	}
	h := hooks[0]
	if want := hooksFile + ":pre_tool_use:0:0"; h.Key != want {
		t.Errorf("key = %q; want %q", h.Key, want)
	}
	if h.TrustStatus != "untrusted" || h.TimeoutSec != 600 || h.Source != "user" || !strings.HasPrefix(h.CurrentHash, "sha256:") {
		t.Errorf("hook = %+v; want untrusted, timeout 600 s, from the user's config, a sha256 hash", h)
	}

	if trusted := TrustHooks(t, home, dir, env); trusted[0].CurrentHash != h.CurrentHash {
		t.Errorf("the hash changed on trusting: %s, then %s", h.CurrentHash, trusted[0].CurrentHash)
	}
	config := readFile(t, filepath.Join(home, "config.toml"))
	if want := "[hooks.state.\"" + h.Key + "\"]\ntrusted_hash = \"" + h.CurrentHash + "\""; !strings.Contains(config, want) {
		t.Errorf("config.toml does not hold\n%s\n---\n%s", want, config)
	}

	agenttest.WriteJSONFile(t, hooksFile, Hooks("PreToolUse", "^Bash$", CommandHookConfig("/usr/bin/true", 3600)))
	if changed := ListHooks(t, dir, env)[0]; changed.TrustStatus != "modified" || changed.TimeoutSec != 3600 {
		t.Errorf("after a change of timeout: %+v; want modified, timeout 3600 s", changed)
	}
}

// TestPermissionRequestNotInExec: codex exec never asks for approval (its
// policy is "never", whatever the configuration says), so a
// PermissionRequest hook is not run; a command that asks for escalated
// permissions is refused.
func TestPermissionRequestNotInExec(t *testing.T) {
	t.Parallel()
	api := NewAPI(t, FunctionCall("exec_command", map[string]any{
		"cmd": "echo hi > out.txt", "sandbox_permissions": "require_escalated", "justification": "write out.txt",
	}), Text("finished"))
	hook := NewCommandHook(t, Decision(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": "PermissionRequest", "decision": map[string]any{"behavior": "allow"}}}))
	r := Run(t, Options{API: api, Prompt: "write hi", Args: []string{"-c", `approval_policy="on-request"`},
		Hooks: Hooks("PermissionRequest", ".*", hook.Hook(30))})
	checkExit(t, r)
	if n := len(hook.Inputs(t)); n != 0 {
		t.Errorf("the PermissionRequest hook ran %d times; want 0", n)
	}
	if _, written := readOut(t, r); written {
		t.Error("out.txt was written; want the escalated command refused")
	}
	const want = "approval policy is Never; reject command — you cannot ask for escalated permissions if the approval policy is Never"
	if got := toolOutput(t, api, r); got != want {
		t.Errorf("the model was told %q; want %q", got, want)
	}
}

// TestHookHash: the hash agents.CodexHookHash computes (what hitl hook
// codex --print-settings prints to trust its hook) is the one Codex's app server
// reports, for hooks with and without a timeout, with a matcher, an empty
// one or none, and on another event.
func TestHookHash(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	hooksFile := filepath.Join(home, "hooks.json")
	agenttest.WriteFile(t, filepath.Join(home, "config.toml"), []byte(Config("http://127.0.0.1:1")))
	group := func(matcher string, timeout int) map[string]any {
		return map[string]any{"matcher": matcher, "hooks": []any{CommandHookConfig("/usr/local/bin/hitl hook codex", timeout)}}
	}
	agenttest.WriteJSONFile(t, hooksFile, map[string]any{"hooks": map[string]any{
		"PreToolUse": []any{group("^Bash$", 30), group("", 0),
			map[string]any{"hooks": []any{CommandHookConfig("/usr/local/bin/hitl hook codex", 5)}}},
		"PermissionRequest": []any{group(".*", 120)},
	}})
	hooks := ListHooks(t, dir, Env(home))
	if len(hooks) != 4 {
		t.Fatalf("hooks/list = %v; want 4 hooks", hooks)
	}
	events := map[string]string{"preToolUse": "PreToolUse", "permissionRequest": "PermissionRequest"}
	for _, h := range hooks {
		timeout := h.TimeoutSec
		if timeout == 600 {
			timeout = 0 // unset
		}
		if got := agents.CodexHookHash(events[h.EventName], h.Matcher, h.Command, timeout); got != h.CurrentHash {
			t.Errorf("CodexHookHash for %s = %s; Codex says %s", h.Key, got, h.CurrentHash)
		}
	}
	if got, want := agents.CodexHookKey(hooksFile, "PreToolUse", 1, 0), hooks[1].Key; got != want {
		t.Errorf("CodexHookKey = %q; Codex says %q", got, want)
	}
}
