package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestAskAction runs "hitl ask" for an action against a real "hitl serve"
// and answers it each way, checking what it prints and how it exits.
func TestAskAction(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	srv := startServer(t)
	c := srv.client(t)
	schemaFile := filepath.Join(t.TempDir(), "schema.json")
	if err := os.WriteFile(schemaFile, []byte(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name           string
		args           []string
		answer         string
		stdout, stderr string // stdout exact (without the newline); stderr contained
		code           int
	}{
		{"approve", nil, `"approve"`, `{"command":"make deploy"}`, "", exitAnswered},
		{"edit", []string{"--args-schema", schemaFile}, `{"decision":"edit","args":{"command":"make deploy-staging"}}`, `{"command":"make deploy-staging"}`, "", exitAnswered},
		{"reject with a reason", []string{"--reject-requires-message"}, `{"decision":"reject","message":"not today"}`, "", "not today", exitRejected},
		{"reject", nil, `"deny"`, "", "rejected", exitRejected},
		{"respond", nil, `{"decision":"respond","message":"run make check first"}`, "run make check first", "", exitResponded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turns.Parallel(t)
			key := "action-" + strings.ReplaceAll(tt.name, " ", "-")
			args := append([]string{"ask", "--server", srv.URL, "--id", key, "--agent", "claude-code",
				"--action-name", "Bash", "--args", `{"command": "make deploy"}`, "--action-description", "Deploy"}, tt.args...)
			p := start(t, args...)
			in := pendingByKey(t, c, key)
			if in.Type != hitl.TypeAction || in.Question != "Run Bash?" || in.Action.Description != "Deploy" || in.SourceAgent != "claude-code" {
				t.Errorf("created %+v", in)
			}
			if tt.name == "edit" && string(in.ArgsSchema) == "" {
				t.Error("--args-schema from a file: not sent")
			}
			if tt.name == "reject with a reason" && !in.RejectRequiresMessage {
				t.Error("--reject-requires-message: not sent")
			}
			if _, err := c.Respond(context.Background(), in.ID, json.RawMessage(tt.answer)); err != nil {
				t.Fatalf("respond: %v", err)
			}
			if code := p.wait(t); code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, p.stderr)
			}
			if got := strings.TrimSuffix(p.stdout.String(), "\n"); got != tt.stdout {
				t.Errorf("stdout %q, want %q", got, tt.stdout)
			}
			if !strings.Contains(p.stderr.String(), tt.stderr) {
				t.Errorf("stderr %q, want it to contain %q", p.stderr, tt.stderr)
			}
		})
	}
	t.Run("decisions", func(t *testing.T) {
		turns.Parallel(t)
		p := start(t, "ask", "--server", srv.URL, "--id", "decisions", "--type", "action", "--action-name", "Write",
			"--decisions", "approve,reject", "Write the file?")
		in := pendingByKey(t, c, "decisions")
		if !slices.Equal(in.Decisions, []hitl.Decision{"approve", "reject"}) || in.Question != "Write the file?" || string(in.Action.Args) != "{}" {
			t.Errorf("created %+v", in)
		}
		if _, err := c.Cancel(context.Background(), in.ID, "done"); err != nil {
			t.Fatal(err)
		}
		if code := p.wait(t); code != exitCancelled {
			t.Errorf("exit %d, want %d", code, exitCancelled)
		}
	})
	for name, args := range map[string][]string{
		"no name":          {"--args", `{"a":1}`},
		"bad args":         {"--action-name", "Bash", "--args", `{"a":`},
		"args not object":  {"--action-name", "Bash", "--args", `[1]`},
		"missing file":     {"--action-name", "Bash", "--args", "/no/such/file.json"},
		"wrong type":       {"--type", "approval", "--action-name", "Bash", "Q?"},
		"unknown decision": {"--action-name", "Bash", "--decisions", "approve,nod"},
	} {
		_, stderr, code := hitlRun(t, append([]string{"ask", "--server", srv.URL}, args...)...)
		if code != exitError || !strings.HasPrefix(stderr, "hitl ask: ") {
			t.Errorf("%s: exit %d, want %d; stderr %q", name, code, exitError, stderr)
		}
	}
}

// TestAnswerAction answers actions with hitl answer's decisions.
func TestAnswerAction(t *testing.T) {
	turns.Parallel(t)
	srv := startServer(t)
	c := srv.client(t)
	ctx := context.Background()
	ask := func() *hitl.Interaction {
		in, _, err := c.Create(ctx, hitl.CreateRequest{Type: hitl.TypeAction, SourceAgent: "claude-code",
			Action: &hitl.Action{Name: "Bash", Args: json.RawMessage(`{"command":"rm -rf build"}`)}})
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"approve"}, `{"decision":"approve"}`},
		{[]string{"reject", "--message", "keep the build"}, `{"decision":"reject","message":"keep the build"}`},
		{[]string{"reject"}, `{"decision":"reject"}`},
		{[]string{"edit", "--args", `{"command": "rm -rf build/tmp"}`}, `{"decision":"edit","args":{"command":"rm -rf build/tmp"}}`},
		{[]string{"respond", "--message", "use make clean"}, `{"decision":"respond","message":"use make clean"}`},
	} {
		in := ask()
		stdout, stderr, code := hitlRun(t, append([]string{"answer", "--server", srv.URL, in.ID}, tt.args...)...)
		if code != 0 || stdout != "answered\n" {
			t.Errorf("answer %v: exit %d %q; stderr %s", tt.args, code, stdout, stderr)
			continue
		}
		got, err := c.Get(ctx, in.ID)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Result.Value) != tt.want || got.Result.Channel != hitl.ChannelCLI {
			t.Errorf("answer %v: recorded %s via %s, want %s via cli", tt.args, got.Result.Value, got.Result.Channel, tt.want)
		}
	}
	in := ask()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"edit"}, "edit needs --args"},
		{[]string{"respond"}, "respond needs --message"},
		{[]string{"maybe", "--message", "x"}, "--message and --args go with approve, reject, edit or respond"},
		{[]string{"edit", "--args", "{"}, "--args is not valid JSON"},
		{[]string{"edit", "--args", `{"command": 5, "command": 6}`}, `field "command" twice`},
		{[]string{"approve", "--message", "fine"}, "message is only for reject and respond"},
	} {
		_, stderr, code := hitlRun(t, append([]string{"answer", "--server", srv.URL, in.ID}, tt.args...)...)
		if code != exitError || !strings.Contains(stderr, tt.want) {
			t.Errorf("answer %v: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, exitError, tt.want)
		}
	}
	if got, _ := c.Get(ctx, in.ID); got.Status != hitl.StatusPending {
		t.Errorf("after refused answers: %s", got.Status)
	}
	// Other types keep their plain answers.
	appr, _, err := c.Create(ctx, hitl.CreateRequest{Type: hitl.TypeApproval, Question: "Deploy?"})
	if err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := hitlRun(t, "answer", "--server", srv.URL, appr.ID, "yes"); code != 0 {
		t.Errorf("answer yes to an approval: exit %d %s", code, stderr)
	}
}

// TestRuleCommands makes, uses, lists and revokes a rule with hitl rule.
func TestRuleCommands(t *testing.T) {
	turns.Parallel(t)
	srv := startServer(t)
	stdout, stderr, code := hitlRun(t, "rule", "add", "--server", srv.URL, "--agent", "claude-code", "--action", "Bash", "--prefix", "git status", "--ttl", "24h")
	if code != 0 {
		t.Fatalf("rule add: exit %d; stderr %s", code, stderr)
	}
	id := strings.TrimSpace(stdout)
	if id == "" {
		t.Fatal("rule add printed no ID")
	}
	// A matching action is decided at once.
	stdout, stderr, code = hitlRun(t, "ask", "--server", srv.URL, "--agent", "claude-code", "--action-name", "Bash", "--args", `{"command":"git status -s"}`)
	if code != exitAnswered || stdout != "{\"command\":\"git status -s\"}\n" || !strings.Contains(stderr, "decided by rule "+id) {
		t.Errorf("ask a ruled action: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	stdout, _, code = hitlRun(t, "rule", "ls", "--server", srv.URL)
	if code != 0 || !strings.Contains(stdout, id) || !strings.Contains(stdout, "command starts with git status") || !strings.Contains(stdout, "claude-code") {
		t.Errorf("rule ls: exit %d:\n%s", code, stdout)
	}
	stdout, stderr, code = hitlRun(t, "rule", "add", "--server", srv.URL, "--agent", "*", "--action", "Write", "--glob", "/etc/**", "--deny", "--message", "not in /etc")
	if code != 0 {
		t.Fatalf("rule add --deny: exit %d; %s", code, stderr)
	}
	deny := strings.TrimSpace(stdout)
	stdout, stderr, code = hitlRun(t, "ask", "--server", srv.URL, "--agent", "any", "--action-name", "Write", "--args", `{"file_path":"/etc/passwd","content":""}`)
	if code != exitRejected || stdout != "" || strings.TrimSpace(stderr) != "hitl ask: decided by rule "+deny+"\nnot in /etc" {
		t.Errorf("ask a denied action: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if stdout, stderr, code = hitlRun(t, "rule", "rm", "--server", srv.URL, id); code != 0 || stdout != "revoked\n" {
		t.Errorf("rule rm: exit %d %q %s", code, stdout, stderr)
	}
	var rules []hitl.Rule
	stdout, _, _ = hitlRun(t, "rule", "ls", "--server", srv.URL, "--json")
	if err := json.Unmarshal([]byte(stdout), &rules); err != nil || len(rules) != 1 || rules[0].ID != deny {
		t.Errorf("rule ls --json after rm: %v %s", err, stdout)
	}
	stdout, _, _ = hitlRun(t, "rule", "ls", "--server", srv.URL, "--all", "--action", "Bash")
	if !strings.Contains(stdout, id) || !strings.Contains(stdout, "revoked") {
		t.Errorf("rule ls --all: %s", stdout)
	}
	for _, args := range [][]string{
		{"add", "--agent", "a", "--action", "Bash", "--equals", `"x"`},
		{"add", "--agent", "a", "--action", "Bash", "--equals", "x", "--arg", "a"},
		{"add", "--agent", "a", "--action", "Bash", "--arg", "command"},
		{"add", "--agent", "a", "--action", "Bash", "--prefix", "ls; rm"},
		{"add", "--action", "Bash"},
		{"rm", "no-such-rule"},
		{"rm"},
	} {
		if _, stderr, code := hitlRun(t, append([]string{"rule"}, append(args, "--server", srv.URL)...)...); code != exitError || stderr == "" {
			t.Errorf("rule %v: exit %d, want %d; stderr %q", args, code, exitError, stderr)
		}
	}
}
