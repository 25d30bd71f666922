package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/auth"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/claudetest"
	"github.com/hitl-sh/hitl/internal/hitltest"
)

// The Claude Code tests run the real Claude Code CLI (internal/claudetest)
// against a scripted model, with a real hitl server in front of a person:
// Claude Code asks hitl through the command hook, the HTTP hook or the
// permission_prompt MCP tool, and the test answers as the person through
// hitl's HTTP API.

// claudeHitl is a hitl server with authentication on: Claude Code asks
// with an agent token ("claude"), the person answers with a responder
// token ("alice").
type claudeHitl struct {
	*hitltest.Server
	agentToken string
	person     *client.Client
}

// startClaudeHitl starts a hitl server for a Claude Code test.
func startClaudeHitl(t *testing.T) *claudeHitl {
	t.Helper()
	srv := hitltest.Start(t, nil)
	h := &claudeHitl{Server: srv, agentToken: addToken(t, srv, "claude", hitl.RoleAgent)}
	h.person = hitltest.NewClient(t, srv.URL, &client.Options{Token: addToken(t, srv, "alice", hitl.RoleResponder), Channel: hitl.ChannelWeb})
	return h
}

// addToken makes an API token in srv's store and returns its secret.
func addToken(t *testing.T, srv *hitltest.Server, name string, role hitl.Role) string {
	t.Helper()
	secret, hash, prefix := auth.NewToken()
	tok := &hitl.Token{ID: auth.NewID(), Name: name, Role: role, Prefix: prefix, Hash: hash}
	if err := srv.Store.CreateToken(context.Background(), tok); err != nil {
		t.Fatalf("create token %s: %v", name, err)
	}
	return secret
}

// env is the environment Claude Code passes its hooks and stdio MCP
// servers: where hitl is, and the agent's token.
func (h *claudeHitl) env() []string {
	return []string{"HITL_URL=" + h.URL, "HITL_TOKEN=" + h.agentToken}
}

// inBackground runs run in a goroutine and returns a channel that gets its
// result. The test waits for run to return before it ends, so that a test
// that fails while an agent still runs (its question never came) does not
// end before the agent's run reports to it. A missing CLI is found before
// (its package's RequireBinary): a skip or a failure in run's goroutine
// would leave the test waiting for a question that never comes.
func inBackground[T any](t *testing.T, run func() T) <-chan T {
	done := make(chan T, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		done <- run()
	}()
	t.Cleanup(func() { <-finished })
	return done
}

// pending waits until the person sees a pending question, and returns it.
func (h *claudeHitl) pending(t *testing.T) *hitl.Interaction {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(60 * time.Second) // Claude Code starts in seconds, on a busy machine in tens
	for {
		list, _, err := h.person.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending})
		if err != nil {
			t.Fatalf("list pending: %v", err)
		}
		if len(list) > 0 {
			return list[len(list)-1] // the oldest
		}
		select {
		case <-tick.C:
		case <-timeout:
			t.Fatal("timed out waiting for Claude Code's question in hitl")
		}
	}
}

// answer answers the next pending question with value, as the person.
func (h *claudeHitl) answer(t *testing.T, value string) *hitl.Interaction {
	t.Helper()
	in := h.pending(t)
	got, err := h.person.Respond(context.Background(), in.ID, json.RawMessage(value))
	if err != nil {
		t.Fatalf("answer %s with %s: %v", in.ID, value, err)
	}
	return got
}

// interactions returns every interaction, oldest first.
func (h *claudeHitl) interactions(t *testing.T) []*hitl.Interaction {
	t.Helper()
	list, _, err := h.Broker.List(context.Background(), hitl.ListFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
		list[i], list[j] = list[j], list[i]
	}
	return list
}

// printedSettings returns the settings hitl hook claude-code
// --print-settings prints with args, run with the test's hitl binary.
func printedSettings(t *testing.T, args ...string) map[string]any {
	t.Helper()
	stdout, stderr, code := runHookWith("", append([]string{"--print-settings"}, args...)...)
	if code != 0 {
		t.Fatalf("--print-settings %v: exit %d: %s", args, code, stderr)
	}
	stdout = strings.ReplaceAll(stdout, `"command": "hitl `, `"command": "`+hitlBin+` `)
	var settings map[string]any
	if err := json.Unmarshal([]byte(stdout), &settings); err != nil {
		t.Fatalf("--print-settings %v: %v", args, err)
	}
	return settings
}

// bash returns a conversation in which the model runs each command with
// Bash (tool calls toolu_00, toolu_01, …), then says "finished".
func bash(commands ...string) []claudetest.Turn {
	var turns []claudetest.Turn
	for _, c := range commands {
		turns = append(turns, claudetest.ToolUse("Bash", map[string]any{"command": c, "description": "Run " + c}))
	}
	return append(turns, claudetest.Text("finished"))
}

// readFile returns the content of name in the run's directory, and
// whether it exists.
func readFile(t *testing.T, r *claudetest.Output, name string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.Dir, name))
	if os.IsNotExist(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

// toolResult returns what the model was told of tool call id.
func toolResult(t *testing.T, api *claudetest.API, r *claudetest.Output, id string) (string, bool) {
	t.Helper()
	content, isError, ok := api.ToolResult(id)
	if !ok {
		t.Fatalf("the model got no tool_result for %s (exit %d, stdout %s)", id, r.ExitCode, r.Stdout)
	}
	return content, isError
}

// checkRun checks that the run ended normally, with the tool calls denied
// listed in its permission_denials.
func checkRun(t *testing.T, r *claudetest.Output, denied ...string) {
	t.Helper()
	if r.ExitCode != 0 || r.Result == nil || r.Result.IsError {
		t.Fatalf("claude failed: exit %d, stdout %s", r.ExitCode, r.Stdout)
	}
	var got []string
	for _, d := range r.Result.PermissionDenials {
		got = append(got, d.ToolUseID)
	}
	if fmt.Sprint(got) != fmt.Sprint(denied) {
		t.Errorf("permission_denials %v, want %v", got, denied)
	}
}

// agentFile returns the content of name in an agent run's directory dir,
// and whether it exists.
func agentFile(t *testing.T, dir, name string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if os.IsNotExist(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}
