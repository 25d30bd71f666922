package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptrace"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/turns"
)

func TestListAnswerCancel(t *testing.T) {
	turns.Parallel(t)
	srv := startServer(t)
	c := srv.client(t)
	ctx := context.Background()

	long := "Should we " + strings.Repeat("really ", 20) + "deploy?"
	approval, _, err := c.Create(ctx, hitl.CreateRequest{Type: hitl.TypeApproval, Question: long, SourceAgent: "deployer"})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	text, _, err := c.Create(ctx, hitl.CreateRequest{Question: "Release notes?\nPlease keep it short.", Timeout: 90})
	if err != nil {
		t.Fatalf("create: %v", err)
	}

	stdout, stderr, code := hitlRun(t, "ls", "--server", srv.URL)
	if code != 0 {
		t.Fatalf("ls: exit %d; stderr:\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("ls printed %d lines, want a header and 2 rows:\n%s", len(lines), stdout)
	}
	if got, want := strings.Fields(lines[0]), []string{"ID", "TYPE", "AGENT", "AGE", "DEADLINE-IN", "QUESTION"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("header = %q, want columns %q", lines[0], want)
	}
	// Newest first.
	if !strings.HasPrefix(lines[1], text.ID) || !strings.Contains(lines[1], "Release notes? Please keep it short.") || !strings.Contains(lines[1], "1m") {
		t.Errorf("row 1 = %q, want %s with its question on one line and 1m left", lines[1], text.ID)
	}
	if !strings.HasPrefix(lines[2], approval.ID) || !strings.Contains(lines[2], "deployer") || !strings.HasSuffix(lines[2], "…") {
		t.Errorf("row 2 = %q, want %s by deployer with the question truncated", lines[2], approval.ID)
	}

	stdout, stderr, code = hitlRun(t, "ls", "--server", srv.URL, "--json")
	if code != 0 {
		t.Fatalf("ls --json: exit %d; stderr:\n%s", code, stderr)
	}
	var list []*hitl.Interaction
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatalf("ls --json output is not a JSON array: %v\n%s", err, stdout)
	}
	if len(list) != 2 || list[0].ID != text.ID || list[1].Question != long {
		t.Errorf("ls --json: got %d interactions, want the two created, newest first", len(list))
	}

	// Answer the approval with a lenient "yes"; a second answer is refused.
	stdout, stderr, code = hitlRun(t, "answer", "--server", srv.URL, approval.ID, "yes")
	if code != 0 || stdout != "answered\n" {
		t.Fatalf("answer: exit %d stdout %q, want 0 %q; stderr:\n%s", code, stdout, "answered\n", stderr)
	}
	got, err := c.Get(ctx, approval.ID)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if string(got.Result.Value) != "true" || got.Result.Channel != hitl.ChannelCLI {
		t.Errorf("recorded value %s via %q, want true via cli", got.Result.Value, got.Result.Channel)
	}
	_, stderr, code = hitlRun(t, "answer", "--server", srv.URL, approval.ID, "no")
	if code != exitError || !strings.Contains(stderr, "already answered") {
		t.Errorf("second answer: exit %d stderr %q, want %d and already answered", code, stderr, exitError)
	}
	_, stderr, code = hitlRun(t, "answer", "--server", srv.URL, "no-such-id", "x")
	if code != exitError || !strings.Contains(stderr, "no-such-id") && !strings.Contains(stderr, "not") {
		t.Errorf("unknown id: exit %d stderr %q, want %d and a not-found message", code, stderr, exitError)
	}
	_, stderr, code = hitlRun(t, "answer", "--server", srv.URL, approval.ID)
	if code != exitError || !strings.Contains(stderr, "VALUE") {
		t.Errorf("missing value: exit %d stderr %q, want %d and usage", code, stderr, exitError)
	}

	// Cancel the other with a reason.
	stdout, stderr, code = hitlRun(t, "cancel", "--server", srv.URL, "--reason", "not needed", text.ID)
	if code != 0 || stdout != "cancelled\n" {
		t.Fatalf("cancel: exit %d stdout %q, want 0 %q; stderr:\n%s", code, stdout, "cancelled\n", stderr)
	}
	if got, err := c.Get(ctx, text.ID); err != nil || got.Status != hitl.StatusCancelled || got.Result.Reason != "not needed" {
		t.Errorf("after cancel: %+v, %v; want cancelled for %q", got, err, "not needed")
	}
	_, stderr, code = hitlRun(t, "answer", "--server", srv.URL, text.ID, "too late")
	if code != exitError || !strings.Contains(stderr, "cancelled") {
		t.Errorf("answer cancelled: exit %d stderr %q, want %d and cancelled", code, stderr, exitError)
	}

	// Nothing pending now; all shows both with their status.
	stdout, stderr, code = hitlRun(t, "ls", "--server", srv.URL)
	if code != 0 || stdout != "" || !strings.Contains(stderr, "no pending interactions") {
		t.Errorf("empty ls: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	stdout, _, _ = hitlRun(t, "ls", "--server", srv.URL, "--status", "all")
	if !strings.Contains(stdout, "STATUS") || !strings.Contains(stdout, "answered") || !strings.Contains(stdout, "cancelled") {
		t.Errorf("ls --status all:\n%s\nwant a STATUS column with answered and cancelled", stdout)
	}
}

// TestListFilters: hitl ls lists one project's, one session's or some
// agents' questions.
func TestListFilters(t *testing.T) {
	turns.Parallel(t)
	srv := startServer(t)
	c := srv.client(t)
	ctx := context.Background()
	create := func(agent, session, cwd string) string {
		t.Helper()
		in, _, err := c.Create(ctx, hitl.CreateRequest{Question: "Go on in " + cwd + "?", SourceAgent: agent, SessionID: session,
			Metadata: map[string]any{"cwd": cwd}})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		return in.ID
	}
	shop := create("codex", "s1", "/home/dev/shop")
	blog := create("codex", "s2", "/home/dev/blog")
	docs := create("gemini-cli", "s2", "/home/dev/docs")
	ids := func(args ...string) string {
		t.Helper()
		stdout, stderr, code := hitlRun(t, append([]string{"ls", "--server", srv.URL, "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("ls %v: exit %d; stderr:\n%s", args, code, stderr)
		}
		var list []*hitl.Interaction
		if err := json.Unmarshal([]byte(stdout), &list); err != nil {
			t.Fatalf("ls %v: %v", args, err)
		}
		var out []string
		for _, in := range list {
			out = append(out, in.ID)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--project", "/home/dev/shop"}, shop},
		{[]string{"--session", "s2"}, docs + " " + blog},
		{[]string{"--agent", "codex"}, blog + " " + shop},
		{[]string{"--agent", "codex", "--agent", "gemini-cli", "--session", "s2"}, docs + " " + blog},
		{[]string{"--project", "/home/dev/none"}, ""},
	} {
		if got := ids(tc.args...); got != tc.want {
			t.Errorf("ls %v: %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestServeGracefulRestart stops "hitl serve" with SIGTERM while an agent
// long-polls, expects exit 0, restarts it on the same database and address,
// and expects the pending interaction to be there and the agent's Wait to
// receive the answer given to the new server.
func TestServeGracefulRestart(t *testing.T) {
	turns.Parallel(t)
	addr := freeAddr(t)
	db := filepath.Join(t.TempDir(), "hitl.db")
	first := startServerAt(t, addr, db)
	// The agent's client signals each long-poll it has sent.
	tr := &pollSignal{base: &http.Transport{}, sent: make(chan struct{}, 1)}
	t.Cleanup(tr.base.CloseIdleConnections)
	c := client.New(first.URL, &client.Options{HTTPClient: &http.Client{Transport: tr}})
	in, _, err := c.Create(context.Background(), hitl.CreateRequest{Question: "Survive a restart?"})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	type result struct {
		in  *hitl.Interaction
		err error
	}
	waited := make(chan result, 1)
	go func() {
		got, err := c.Wait(context.Background(), in.ID)
		waited <- result{got, err}
	}()
	select {
	case <-tr.sent:
	case <-time.After(20 * time.Second):
		t.Fatal("the agent never sent its long-poll")
	}

	if err := first.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("signal: %v", err)
	}
	if code := first.wait(t); code != 0 {
		t.Fatalf("hitl serve after SIGTERM: exit %d, want 0; stderr:\n%s", code, first.stderr)
	}
	if !strings.Contains(first.stderr.String(), "stopped") {
		t.Errorf("stderr should log the shutdown:\n%s", first.stderr)
	}

	second := startServerAt(t, addr, db)
	got, err := second.client(t).Get(context.Background(), in.ID)
	if err != nil {
		t.Fatalf("get after restart: %v", err)
	}
	if got.Status != hitl.StatusPending || got.Question != "Survive a restart?" {
		t.Fatalf("after restart: status %q question %q, want the pending interaction", got.Status, got.Question)
	}
	if _, stderr, code := hitlRun(t, "answer", "--server", second.URL, in.ID, "yes, still here"); code != 0 {
		t.Fatalf("answer: exit %d; stderr:\n%s", code, stderr)
	}
	select {
	case r := <-waited:
		if r.err != nil || string(r.in.Result.Value) != `"yes, still here"` {
			t.Errorf("wait across the restart: %v, %v; want the answer", r.in, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the agent's wait did not return after the restart")
	}
}

// pollSignal is an http.RoundTripper that signals on sent once a
// long-poll request has been written to the server.
type pollSignal struct {
	base *http.Transport
	sent chan struct{}
}

func (p *pollSignal) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Path, "/wait") {
		trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) {
			select {
			case p.sent <- struct{}{}:
			default:
			}
		}}
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	}
	return p.base.RoundTrip(req)
}

func TestRunInProcess(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // a substring
		stderr string // a substring
	}{
		{"no command", nil, 2, "", "Usage:"},
		{"help", []string{"help"}, 0, "Commands:", ""},
		{"help ask", []string{"help", "ask"}, 0, "--on-timeout", ""},
		{"ask -h", []string{"ask", "-h"}, 0, "", "Exit codes"},
		{"serve -h", []string{"serve", "-h"}, 0, "", "HITL_ADDR"},
		{"unknown", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"version", []string{"version"}, 0, "hitl ", ""},
		{"serve bad level", []string{"serve", "--log-level", "loud"}, 2, "", "--log-level"},
		{"serve bad format", []string{"serve", "--log-format", "xml"}, 2, "", "--log-format"},
		{"serve bad db", []string{"serve", "--addr", "127.0.0.1:0", "--db", "/no/such/dir/hitl.db"}, 1, "", "cannot open database"},
		{"cancel without id", []string{"cancel"}, exitError, "", "exactly one interaction ID"},
		{"ls bad limit", []string{"ls", "--server", "http://127.0.0.1:1", "--limit", "0"}, exitError, "", "--limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turns.Parallel(t)
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit code = %d, want %d; stderr:\n%s", code, tt.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("stdout = %q, want it to contain %q", stdout.String(), tt.stdout)
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), tt.stderr)
			}
		})
	}
}

func TestServePortTaken(t *testing.T) {
	turns.Parallel(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"serve", "--addr", ln.Addr().String(), "--db", filepath.Join(t.TempDir(), "hitl.db")}, &stdout, &stderr)
	if code != 1 {
		t.Errorf("exit code = %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "already in use") {
		t.Errorf("stderr = %q, want it to say the address is in use", stderr.String())
	}
}

// TestServeRefusesASecondServerOnOneSQLiteFile: a server relies on being
// the only one that changes its interactions, so a second on the same file
// is refused, and says why.
func TestServeRefusesASecondServerOnOneSQLiteFile(t *testing.T) {
	turns.Parallel(t)
	first := startServer(t)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"serve", "--addr", freeAddr(t), "--db", first.DB}, &stdout, &stderr)
	if code != 1 {
		t.Errorf("exit code = %d, want 1", code)
	}
	if want := "another hitl serve is using " + first.DB; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr = %q, want it to contain %q", stderr.String(), want)
	}
}

func TestServeInProcess(t *testing.T) {
	turns.Parallel(t)
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", addr, "--db", filepath.Join(t.TempDir(), "hitl.db"), "--log-format", "json"}, &stdout, &stderr)
	}()
	waitFor(t, "the server to log its URL", func() bool {
		return strings.Contains(stderr.String(), `"url":"http://`+addr+`"`)
	})
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code = %d, want 0; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop after its context ended")
	}
}

func TestParseOption(t *testing.T) {
	tests := []struct {
		in   string
		want hitl.Option
	}{
		{"eu=Europe", hitl.Option{Key: "eu", Label: "Europe"}},
		{"US East", hitl.Option{Key: "us_east", Label: "US East"}},
		{"=Only Label", hitl.Option{Key: "only_label", Label: "Only Label"}},
		{"a = b = c", hitl.Option{Key: "a", Label: "b = c"}},
	}
	for _, tt := range tests {
		got, err := parseOption(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parseOption(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	if _, err := parseOption("  "); err == nil {
		t.Error(`parseOption("  "): err = nil, want an error`)
	}
}

func TestJSONOrString(t *testing.T) {
	tests := map[string]string{
		`true`:            `true`,
		`["a","b"]`:       `["a","b"]`,
		`{"x":1}`:         `{"x":1}`,
		`yes`:             `"yes"`,
		`looks good`:      `"looks good"`,
		`"quoted"`:        `"quoted"`,
		`{"broken":`:      `"{\"broken\":"`,
		` 42 `:            `42`,
		`Ship <it> & go!`: `"Ship <it> & go!"`,
	}
	for in, want := range tests {
		if got := string(jsonOrString(in)); got != want {
			t.Errorf("jsonOrString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestShortDuration(t *testing.T) {
	tests := map[time.Duration]string{
		-time.Second:                 "0s",
		42 * time.Second:             "42s",
		5*time.Minute + time.Second:  "5m",
		3*time.Hour + 12*time.Minute: "3h12m",
		52 * time.Hour:               "2d4h",
	}
	for d, want := range tests {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
