package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/refused"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestAsk runs "hitl ask" for each type against a real "hitl serve",
// answers over HTTP once the interaction is pending, and checks what ask
// prints and how it exits.
func TestAsk(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	srv := startServer(t)
	c := srv.client(t)

	schema := filepath.Join(t.TempDir(), "schema.json")
	if err := os.WriteFile(schema, []byte(`{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name"]}`), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		args     []string
		answer   string // JSON sent to respond
		wantType hitl.Type
		stdout   string // exact, without the newline; or JSON when wantJSON
		wantJSON bool
		code     int
		check    func(t *testing.T, in *hitl.Interaction) // more checks of what was created
	}{
		{name: "approval approved", args: []string{"--type", "approval", "Deploy?"}, answer: `"approve"`,
			wantType: hitl.TypeApproval, stdout: "approved", code: exitAnswered},
		{name: "approval rejected", args: []string{"--type", "approval", "Drop the table?"}, answer: `"no"`,
			wantType: hitl.TypeApproval, stdout: "rejected", code: exitRejected},
		{name: "single choice", args: []string{"Which region?", "--option", "eu=Europe", "--option", "US East"}, answer: `"US East"`,
			wantType: hitl.TypeSingleChoice, stdout: "us_east", code: exitAnswered},
		{name: "multi choice", args: []string{"--type", "multi_choice", "--option", "a", "--option", "b", "--option", "c", "Which ones?"}, answer: `["c","a"]`,
			wantType: hitl.TypeMultiChoice, stdout: `["c","a"]`, wantJSON: true, code: exitAnswered},
		{name: "form", args: []string{"--schema", schema, "--context", "For the **badge**.", "Who are you?"}, answer: `{"name":"Ada","age":36}`,
			wantType: hitl.TypeForm, stdout: `{"name":"Ada","age":36}`, wantJSON: true, code: exitAnswered,
			check: func(t *testing.T, in *hitl.Interaction) {
				if got, want := in.Context, "For the **badge**."; got != want {
					t.Errorf("context = %q, want %q", got, want)
				}
			}},
		{name: "free text", args: []string{"--agent", "writer", "Any", "last", "words?"}, answer: `"ship it"`,
			wantType: hitl.TypeFreeText, stdout: "ship it", code: exitAnswered,
			check: func(t *testing.T, in *hitl.Interaction) {
				if got, want := in.Question, "Any last words?"; got != want {
					t.Errorf("question = %q, want %q", got, want)
				}
				if got, want := in.SourceAgent, "writer"; got != want {
					t.Errorf("source_agent = %q, want %q", got, want)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turns.Parallel(t)
			key := "ask-" + strings.ReplaceAll(tt.name, " ", "-")
			p := start(t, append([]string{"ask", "--server", srv.URL, "--id", key}, tt.args...)...)
			in := pendingByKey(t, c, key)
			if in.Type != tt.wantType {
				t.Errorf("created type %q, want %q", in.Type, tt.wantType)
			}
			if tt.check != nil {
				tt.check(t, in)
			}
			if _, err := c.Respond(context.Background(), in.ID, json.RawMessage(tt.answer)); err != nil {
				t.Fatalf("respond: %v", err)
			}
			code := p.wait(t)
			if code != tt.code {
				t.Errorf("exit code = %d, want %d; stderr:\n%s", code, tt.code, p.stderr)
			}
			got := strings.TrimSuffix(p.stdout.String(), "\n")
			if tt.wantJSON {
				var g, w any
				if err := json.Unmarshal([]byte(got), &g); err != nil {
					t.Fatalf("stdout %q is not JSON: %v", got, err)
				}
				json.Unmarshal([]byte(tt.stdout), &w)
				if !reflect.DeepEqual(g, w) {
					t.Errorf("stdout = %s, want %s", got, tt.stdout)
				}
			} else if got != tt.stdout {
				t.Errorf("stdout = %q, want %q", got, tt.stdout)
			}
		})
	}
}

func TestAskOutcomes(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	srv := startServer(t)
	c := srv.client(t)

	t.Run("expired", func(t *testing.T) {
		turns.Parallel(t)
		stdout, stderr, code := hitlRun(t, "ask", "--server", srv.URL, "--timeout", "1s", "Quick, anyone?")
		if code != exitExpired {
			t.Errorf("exit code = %d, want %d; stderr:\n%s", code, exitExpired, stderr)
		}
		if stdout != "" {
			t.Errorf("stdout = %q, want nothing", stdout)
		}
		if !strings.Contains(stderr, "expired") {
			t.Errorf("stderr %q should say it expired", stderr)
		}
	})

	t.Run("default on timeout", func(t *testing.T) {
		turns.Parallel(t)
		stdout, stderr, code := hitlRun(t, "ask", "--server", srv.URL, "--timeout", "1s",
			"--on-timeout", "default", "--default", "fallback plan", "Which plan?")
		if code != exitAnswered {
			t.Errorf("exit code = %d, want %d; stderr:\n%s", code, exitAnswered, stderr)
		}
		if got, want := stdout, "fallback plan\n"; got != want {
			t.Errorf("stdout = %q, want %q", got, want)
		}
	})

	t.Run("cancelled on the server", func(t *testing.T) {
		turns.Parallel(t)
		p := start(t, "ask", "--server", srv.URL, "--id", "to-cancel", "Will this be withdrawn?")
		in := pendingByKey(t, c, "to-cancel")
		if _, err := c.Cancel(context.Background(), in.ID, "superseded"); err != nil {
			t.Fatalf("cancel: %v", err)
		}
		if code := p.wait(t); code != exitCancelled {
			t.Errorf("exit code = %d, want %d; stderr:\n%s", code, exitCancelled, p.stderr)
		}
		if !strings.Contains(p.stderr.String(), "superseded") {
			t.Errorf("stderr %q should give the reason", p.stderr)
		}
	})

	t.Run("interrupted", func(t *testing.T) {
		turns.Parallel(t)
		p := start(t, "ask", "--server", srv.URL, "--id", "to-interrupt", "--type", "approval", "Interrupt me?")
		got := interrupt(t, p, c, pendingByKey(t, c, "to-interrupt"))
		if got, want := got.Result.Reason, "agent_cancelled"; got != want {
			t.Errorf("reason = %q, want %q", got, want)
		}
	})

	for _, key := range []string{"interrupted-asking", ""} {
		t.Run("interrupted while asking, --id "+strconv.Quote(key), func(t *testing.T) {
			turns.Parallel(t)
			// A proxy holds back the reply to the first create, so Ctrl-C
			// lands after the server stored the question but before ask
			// heard of it. Without --id, ask's own random key finds the
			// question again.
			target, err := url.Parse(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			held := make(chan struct{})
			t.Cleanup(func() { close(held) })
			var creates atomic.Int32
			proxy := httputil.NewSingleHostReverseProxy(target)
			proxy.ModifyResponse = func(resp *http.Response) error {
				if resp.Request.Method == http.MethodPost && resp.Request.URL.Path == "/api/v1/interactions" && creates.Add(1) == 1 {
					select {
					case <-held:
					case <-resp.Request.Context().Done():
					}
				}
				return nil
			}
			front := httptest.NewServer(proxy)
			t.Cleanup(front.Close)

			question := "Stop before you hear back? (--id " + strconv.Quote(key) + ")"
			args := []string{"ask", "--server", front.URL, "--type", "approval", question}
			if key != "" {
				args = append(args[:1], append([]string{"--id", key}, args[1:]...)...)
			}
			p := start(t, args...)
			interrupt(t, p, c, pendingByQuestion(t, c, question))
			if n := creates.Load(); n != 2 {
				t.Errorf("%d creates reached the server, want 2 (the held one and the repeat)", n)
			}
		})
	}

	t.Run("idempotent repeat of an answered question", func(t *testing.T) {
		turns.Parallel(t)
		p := start(t, "ask", "--server", srv.URL, "--id", "repeat", "Same again?")
		in := pendingByKey(t, c, "repeat")
		if _, err := c.Respond(context.Background(), in.ID, json.RawMessage(`"once"`)); err != nil {
			t.Fatalf("respond: %v", err)
		}
		if code := p.wait(t); code != exitAnswered {
			t.Fatalf("first ask: exit %d, want 0; stderr:\n%s", code, p.stderr)
		}
		stdout, stderr, code := hitlRun(t, "ask", "--server", srv.URL, "--id", "repeat", "Same again?")
		if code != exitAnswered || stdout != "once\n" {
			t.Errorf("repeat: exit %d stdout %q, want 0 %q; stderr:\n%s", code, stdout, "once\n", stderr)
		}
	})
}

func TestAskErrors(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	srv := startServer(t)
	down := refused.URL(t)

	tests := []struct {
		name   string
		args   []string
		stderr string // a substring
	}{
		{"server unreachable", []string{"--server", down, "Hello?"}, "connect"},
		{"no question", []string{"--server", srv.URL}, "a question is required"},
		{"unknown flag", []string{"--server", srv.URL, "--colour", "red", "Hello?"}, "flag provided but not defined"},
		{"bad type", []string{"--server", srv.URL, "--type", "essay", "Hello?"}, "interaction_type must be one of"},
		{"choice without options", []string{"--server", srv.URL, "--type", "single_choice", "Hello?"}, "needs at least one option"},
		{"bad timeout", []string{"--server", srv.URL, "--timeout", "soon", "Hello?"}, "invalid value"},
		{"missing schema", []string{"--server", srv.URL, "--schema", "/no/such/schema.json", "Hello?"}, "read --schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turns.Parallel(t)
			stdout, stderr, code := hitlRun(t, append([]string{"ask"}, tt.args...)...)
			if code != exitError {
				t.Errorf("exit code = %d, want %d; stderr:\n%s", code, exitError, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr, tt.stderr)
			}
		})
	}
}

// interrupt sends Ctrl-C to a waiting "hitl ask" for in, and checks that it
// exits as cancelled and that in is cancelled on the server, which it
// returns.
// pendingByQuestion waits for the pending interaction asking question and
// returns it.
func pendingByQuestion(t *testing.T, c *client.Client, question string) *hitl.Interaction {
	t.Helper()
	var found *hitl.Interaction
	waitFor(t, "question "+strconv.Quote(question)+" to be pending", func() bool {
		list, _, err := c.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending, Limit: 500})
		if err != nil {
			t.Fatalf("list pending: %v", err)
		}
		for _, in := range list {
			if in.Question == question {
				found = in
			}
		}
		return found != nil
	})
	return found
}

func interrupt(t *testing.T, p *proc, c *client.Client, in *hitl.Interaction) *hitl.Interaction {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatalf("signal: %v", err)
	}
	if code := p.wait(t); code != exitCancelled {
		t.Errorf("exit code = %d, want %d; stderr:\n%s", code, exitCancelled, p.stderr)
	}
	got, err := c.Get(context.Background(), in.ID)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.Status != hitl.StatusCancelled {
		t.Fatalf("status on the server = %q, want cancelled; stderr:\n%s", got.Status, p.stderr)
	}
	return got
}
