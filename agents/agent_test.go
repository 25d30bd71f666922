package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/refused"
	"github.com/hitl-sh/hitl/tools"
)

var person = hitl.WithCaller(context.Background(), hitl.Caller{Name: "alice", Channel: hitl.ChannelWeb})

// hookAsync runs a.Hook in a goroutine.
func hookAsync(svc hitl.Service, a *Agent, data []byte) <-chan *tools.Verdict {
	ch := make(chan *tools.Verdict, 1)
	go func() {
		_, v, _ := a.Hook(context.Background(), svc, data, nil)
		ch <- v
	}()
	return ch
}

// verdict waits for a verdict.
func verdict(t *testing.T, ch <-chan *tools.Verdict) *tools.Verdict {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatal("no verdict after 30s")
		return nil
	}
}

// answerPending answers the one pending question as alice.
func answerPending(t *testing.T, b *broker.Broker, value string) *hitl.Interaction {
	t.Helper()
	var list []*hitl.Interaction
	hitltest.WaitFor(t, "a pending question", func() bool {
		var err error
		list, _, err = b.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending})
		return err == nil && len(list) == 1 && b.Waiting() == 1
	})
	in, err := b.Respond(person, list[0].ID, json.RawMessage(value))
	if err != nil {
		t.Fatalf("respond %s: %v", value, err)
	}
	return in
}

// TestHookQuestion: each agent's call becomes an action of its kind,
// scoped to the agent, with an idempotency key from its call id (Codex)
// or the call itself (Gemini CLI, which gives none).
func TestHookQuestion(t *testing.T) {
	t.Parallel()
	const session = "00000000-0000-0000-0000-000000000000"
	cases := []struct {
		agent   *Agent
		fixture string
		key     string // a prefix
	}{
		{Codex, "pretooluse-input-bash.json", "codex:" + session + ":call_00"},
		{Gemini, "beforetool-input-shell.json", "gemini-cli:" + session + ":run_shell_command:sha256:"},
		{Copilot, "pretooluse-input-bash.json", "copilot-cli:" + session + ":bash:sha256:"},
		{OpenCode, "", "opencode:ses_0:call_00"},
	}
	for _, tc := range cases {
		b := hitltest.StartBroker(t)
		var data []byte
		if tc.agent == OpenCode {
			data = pluginMessage(t, "tool-execute-before-bash.json", "/work")
		} else {
			data = fixture(t, tc.agent.Name, tc.fixture)
		}
		ch := hookAsync(b, tc.agent, data)
		in := answerPending(t, b, `"approve"`)
		if v := verdict(t, ch); !v.Allow || v.Failed {
			t.Errorf("%s: verdict %+v, want allowed", tc.agent.Name, v)
		}
		if in.SourceAgent != tc.agent.Name || in.Action.Name != "Bash" && in.Action.Name != "run_shell_command" && in.Action.Name != "bash" || in.Action.Kind != hitl.KindShell ||
			!strings.HasPrefix(in.IdempotencyKey, tc.key) || !strings.HasPrefix(in.Context, tc.agent.Display+" asks to run") {
			t.Errorf("%s: asked %s %+v, key %q, context %q", tc.agent.Name, in.SourceAgent, in.Action, in.IdempotencyKey, in.Context)
		}
	}
}

// TestGeminiSameCall: Gemini CLI gives no call id, so the same call made
// again in the session finds the question, and the answer, it had; another
// call is asked afresh.
func TestGeminiSameCall(t *testing.T) {
	t.Parallel()
	b := hitltest.StartBroker(t)
	data := fixture(t, "gemini-cli", "beforetool-input-shell.json")
	ch := hookAsync(b, Gemini, data)
	first := answerPending(t, b, `{"decision": "reject", "message": "not now"}`)
	if v := verdict(t, ch); v.Allow {
		t.Fatalf("verdict %+v, want denied", v)
	}
	_, again, _ := Gemini.Hook(context.Background(), b, data, nil) // nobody answers
	if again.Allow || again.Interaction == nil || again.Interaction.ID != first.ID || !strings.HasSuffix(again.Reason, "rejected it: not now") {
		t.Errorf("the same call again: %+v, want the first question's answer", again)
	}
	other := bytes.Replace(data, []byte("echo hi"), []byte("echo ho"), 1)
	ch = hookAsync(b, Gemini, other)
	if in := answerPending(t, b, `"approve"`); in.ID == first.ID {
		t.Error("another call found the first question")
	}
	verdict(t, ch)
}

// panicking is a service that panics when asked.
type panicking struct{ hitl.Service }

func (panicking) Create(context.Context, hitl.CreateRequest) (*hitl.Interaction, bool, error) {
	panic("boom")
}

// TestRun: a decision (every failure of hitl a deny) exits 0; input that
// is not the hook's exits 2, which blocks the call in every agent, with a
// deny on stdout as well.
func TestRun(t *testing.T) {
	t.Parallel()
	down := client.New(refused.URL(t), nil)
	codexDeny := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":`
	cases := []struct {
		name   string
		agent  *Agent
		svc    hitl.Service
		stdin  string
		code   int
		stdout string // a prefix
		stderr string // a substring
	}{
		{"codex, hitl down", Codex, down, string(fixture(t, "codex", "pretooluse-input-bash.json")), 0,
			codexDeny + `"hitl could not get a decision on this Bash call, so it is denied: cannot reach the hitl server`, "cannot reach the hitl server"},
		{"gemini, hitl down", Gemini, down, string(fixture(t, "gemini-cli", "beforetool-input-shell.json")), 0,
			`{"decision":"deny","reason":"hitl could not get a decision on this run_shell_command call, so it is denied: cannot reach the hitl server`, "cannot reach the hitl server"},
		{"codex, panic", Codex, panicking{}, string(fixture(t, "codex", "pretooluse-input-bash.json")), 0,
			codexDeny + `"hitl could not get a decision on this Bash call, so it is denied: hitl hook crashed (boom).`, "crashed"},
		{"codex, no tool", Codex, down, `{"hook_event_name": "PreToolUse", "tool_input": {}}`, 0,
			codexDeny + `"hitl could not get a decision on this tool call, so it is denied: hitl refused the question (the tool call has no tool name)."`, ""},
		{"codex, not JSON", Codex, down, "hello", 2,
			codexDeny + `"hitl could not read this hook's input, so the call is denied: the hook input is not a JSON object; run this as Codex's hook`, "not a JSON object"},
		{"gemini, empty", Gemini, down, "", 2,
			`{"decision":"deny","reason":"hitl could not read this hook's input, so the call is denied: the hook input is not a JSON object; run this as Gemini CLI's hook`, "not a JSON object"},
		{"codex, another event", Codex, down, `{"hook_event_name": "PostToolUse", "tool_name": "Bash"}`, 2,
			codexDeny, "hitl answers the PreToolUse hook, not PostToolUse"},
		{"gemini, Claude Code's event", Gemini, down, `{"hook_event_name": "PreToolUse", "tool_name": "Bash"}`, 2,
			`{"decision":"deny"`, "hitl answers the BeforeTool hook, not PreToolUse"},
		{"copilot, hitl down", Copilot, down, string(fixture(t, "copilot-cli", "pretooluse-input-bash.json")), 0,
			`{"permissionDecision":"deny","permissionDecisionReason":"hitl could not get a decision on this bash call, so it is denied: cannot reach the hitl server`, "cannot reach the hitl server"},
		{"copilot, panic", Copilot, panicking{}, string(fixture(t, "copilot-cli", "pretooluse-input-bash.json")), 0,
			`{"permissionDecision":"deny","permissionDecisionReason":"hitl could not get a decision on this bash call, so it is denied: hitl hook crashed (boom).`, "crashed"},
		{"copilot, toolArgs not an object", Copilot, down, `{"toolName": "bash", "toolArgs": "ls"}`, 0,
			`{"permissionDecision":"deny","permissionDecisionReason":"hitl could not get a decision on this bash call, so it is denied: hitl refused the question (the tool call's input is not a JSON object)."`, ""},
		{"opencode, hitl down", OpenCode, down, `{"tool":"bash","sessionID":"s","callID":"c","cwd":"/w","args":{"command":"ls"}}`, 0,
			`{"decision":"deny","reason":"hitl could not get a decision on this bash call, so it is denied: cannot reach the hitl server`, "cannot reach the hitl server"},
		{"opencode, not the plugin's", OpenCode, down, `{"toolName":"bash"}`, 2,
			`{"decision":"deny"`, "run this from hitl's OpenCode plugin"},
		{"copilot, Claude Code's input", Copilot, down, `{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}`, 2,
			`{"permissionDecision":"deny"`, "the hook input has no toolName or toolArgs"},
	}
	for _, tc := range cases {
		var stdout, stderr bytes.Buffer
		code := tc.agent.Run(context.Background(), tc.svc, strings.NewReader(tc.stdin), &stdout, &stderr, nil)
		if code != tc.code || !strings.HasPrefix(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("%s: exit %d, stdout %s, stderr %s\nwant exit %d, stdout %s…, stderr …%s…", tc.name, code, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.stderr)
		}
		if !json.Valid(stdout.Bytes()) {
			t.Errorf("%s: stdout %q is not JSON", tc.name, stdout.String())
		}
	}
}

// TestFixturesCurrent: the payloads here are those the harnesses recorded
// from the real programs; after a harness records another version's, the
// adapter must be checked against them (copy them here).
func TestFixturesCurrent(t *testing.T) {
	t.Parallel()
	for dir, harness := range map[string]string{"codex": "codextest", "gemini-cli": "geminitest", "copilot-cli": "copilottest", "opencode": "opencodetest"} {
		names, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		if err != nil || len(names) == 0 {
			t.Fatalf("no fixtures in testdata/%s: %v", dir, err)
		}
		for _, name := range names {
			recorded, err := os.ReadFile(filepath.Join("..", "internal", harness, "testdata", filepath.Base(name)))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(fixture(t, dir, filepath.Base(name)), recorded) {
				t.Errorf("%s differs from internal/%s/testdata/%s", name, harness, filepath.Base(name))
			}
		}
	}
}

// fixture returns testdata/dir/name.
func fixture(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameJSON reports whether got and want are the same JSON value.
func sameJSON(t *testing.T, got []byte, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s is not JSON: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s is not JSON: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return string(gb) == string(wb)
}

// TestWaitAtMost: with WaitAtMost, a call nobody has decided on yet is
// denied saying the question is still open, and left open; the same call
// made again (by Codex, under a new call id) finds it and, once the
// person has answered, runs.
func TestWaitAtMost(t *testing.T) {
	t.Parallel()
	b := hitltest.StartBroker(t)
	data := fixture(t, "codex", "pretooluse-input-bash.json")
	opts := &Options{WaitAtMost: 200 * time.Millisecond}
	out, v, err := Codex.Hook(context.Background(), b, data, opts)
	if err != nil || v.Allow || v.Failed || !strings.Contains(v.Reason, "make the same call again later") {
		t.Fatalf("first call: %+v, %v; want denied as still waiting", v, err)
	}
	if !strings.Contains(string(out), `"permissionDecision":"deny"`) {
		t.Errorf("output %s, want a deny (Codex knows no defer)", out)
	}
	if v.Interaction == nil || v.Interaction.Status != hitl.StatusPending {
		t.Fatalf("the question: %+v, want it still open", v.Interaction)
	}
	if _, err := b.Respond(person, v.Interaction.ID, json.RawMessage(`"approve"`)); err != nil {
		t.Fatal(err)
	}
	again := bytes.Replace(data, []byte(`"call_00"`), []byte(`"call_07"`), 1)
	_, v2, _ := Codex.Hook(context.Background(), b, again, opts)
	if !v2.Allow || v2.Interaction == nil || v2.Interaction.ID != v.Interaction.ID {
		t.Errorf("the same call again: %+v, want allowed by the first question's answer", v2)
	}
	// Another command is asked afresh.
	other := bytes.Replace(data, []byte("echo hi"), []byte("echo ho"), 1)
	if _, v3, _ := Codex.Hook(context.Background(), b, other, opts); v3.Interaction == nil || v3.Interaction.ID == v.Interaction.ID {
		t.Errorf("another call: %+v, want a question of its own", v3)
	}
}
