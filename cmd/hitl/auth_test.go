package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/turns"
)

// hitlRunWith runs hitl with args to completion, with stdin and extra
// environment variables. It fails the test if hitl is still running after
// a minute (such as a server that should have refused to start).
func hitlRunWith(t *testing.T, stdin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, hitlBin, args...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("hitl %s still running after a minute; stderr:\n%s", strings.Join(args, " "), errb.String())
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("run hitl %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), code
}

// mustRun runs hitl and fails the test unless it exits with want.
func mustRun(t *testing.T, want int, stdin string, args ...string) string {
	t.Helper()
	stdout, stderr, code := hitlRunWith(t, stdin, nil, args...)
	if code != want {
		t.Fatalf("hitl %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, stdout, stderr)
	}
	return stdout
}

var tokenPattern = regexp.MustCompile(`^hitl_[0-9A-Za-z]{40}$`)

func TestTokenCommands(t *testing.T) {
	turns.Parallel(t)
	db := filepath.Join(t.TempDir(), "hitl.db")
	first := strings.TrimSpace(mustRun(t, 0, "", "token", "create", "--name", "build-bot", "--role", "agent", "--db", db))
	if !tokenPattern.MatchString(first) {
		t.Fatalf("token create printed %q, want only the token", first)
	}
	second := strings.TrimSpace(mustRun(t, 0, "", "token", "create", "--name", "build-bot", "--db", db))
	bot := strings.TrimSpace(mustRun(t, 0, "", "token", "create", "--name", "slack-bot", "--role", "responder", "--groups", "ops, security", "--db", db))

	out := mustRun(t, 0, "", "token", "ls", "--db", db)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "ID") {
		t.Fatalf("token ls:\n%s\nwant a header and 3 tokens", out)
	}
	if !strings.Contains(lines[3], "slack-bot") || !strings.Contains(lines[3], "responder") || !strings.Contains(lines[3], "ops,security") || !strings.Contains(lines[3], bot[:12]+"…") {
		t.Errorf("token ls row %q: want slack-bot, responder, ops,security and %s…", lines[3], bot[:12])
	}
	for _, secret := range []string{first, second, bot} {
		if strings.Contains(out, secret[12:]) {
			t.Errorf("token ls shows a token's secret part:\n%s", out)
		}
	}
	var tokens []hitl.Token
	if err := json.Unmarshal([]byte(mustRun(t, 0, "", "token", "ls", "--json", "--db", db)), &tokens); err != nil || len(tokens) != 3 {
		t.Fatalf("token ls --json: %v, %d tokens", err, len(tokens))
	}

	// Revoke one by ID, then the rest of the name.
	out = mustRun(t, 0, "", "token", "revoke", tokens[0].ID, "--db", db)
	if !strings.Contains(out, "revoked "+tokens[0].ID+" (build-bot, agent)") {
		t.Errorf("revoke by ID printed %q", out)
	}
	out = mustRun(t, 0, "", "token", "revoke", "--db", db, "build-bot")
	if strings.Count(out, "revoked") != 1 || !strings.Contains(out, tokens[1].ID) {
		t.Errorf("revoke by name printed %q, want the second build-bot token", out)
	}
	if _, stderr, code := hitlRunWith(t, "", nil, "token", "revoke", "build-bot", "--db", db); code != 1 || !strings.Contains(stderr, "no token") {
		t.Errorf("revoke again: exit %d, %s; want 1 and no token", code, stderr)
	}

	for _, bad := range [][]string{
		{"token", "create", "--db", db},
		{"token", "create", "--name", "x", "--role", "root", "--db", db},
		{"token", "create", "--name", "local", "--db", db},
		{"token", "create", "--name", "a b", "--db", db},
		{"token", "frobnicate"},
	} {
		if _, stderr, code := hitlRunWith(t, "", nil, bad...); code != 2 {
			t.Errorf("hitl %s: exit %d, want 2 (%s)", strings.Join(bad, " "), code, stderr)
		}
	}
}

func TestUserCommands(t *testing.T) {
	turns.Parallel(t)
	db := filepath.Join(t.TempDir(), "hitl.db")
	out := mustRun(t, 0, "alice-password\n", "user", "add", "alice", "--email", "alice@example.com", "--groups", "ops,security", "--password-stdin", "--db", db)
	if !strings.Contains(out, "added alice (responder)") {
		t.Errorf("user add printed %q", out)
	}
	mustRun(t, 0, "carol-password", "user", "add", "carol", "--admin", "--password-stdin", "--db", db)
	if _, stderr, code := hitlRunWith(t, "another-password\n", nil, "user", "add", "alice", "--password-stdin", "--db", db); code != 1 || !strings.Contains(stderr, "exists") {
		t.Errorf("adding alice again: exit %d, %s; want 1, exists", code, stderr)
	}
	if _, stderr, code := hitlRunWith(t, "short\n", nil, "user", "add", "bob", "--password-stdin", "--db", db); code != 1 || !strings.Contains(stderr, "at least 8") {
		t.Errorf("short password: exit %d, %s; want 1, at least 8 characters", code, stderr)
	}
	if _, stderr, code := hitlRunWith(t, "", nil, "user", "add", "bob", "--db", db); code != 1 || !strings.Contains(stderr, "--password-stdin") {
		t.Errorf("no terminal: exit %d, %s; want 1 and a hint for --password-stdin", code, stderr)
	}

	out = mustRun(t, 0, "", "user", "ls", "--db", db)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "alice") || !strings.Contains(lines[1], "alice@example.com") ||
		!strings.Contains(lines[1], "ops,security") || !strings.Contains(lines[2], "carol") || !strings.Contains(lines[2], "admin") {
		t.Errorf("user ls:\n%s\nwant alice (ops,security) and carol (admin)", out)
	}

	mustRun(t, 0, "new-alice-password\n", "user", "passwd", "alice", "--password-stdin", "--db", db)
	if out := mustRun(t, 0, "", "user", "disable", "carol", "--db", db); !strings.Contains(out, "disabled carol") {
		t.Errorf("user disable printed %q", out)
	}
	if out := mustRun(t, 0, "", "user", "ls", "--db", db); !strings.Contains(out, "admin (disabled)") {
		t.Errorf("user ls after disable:\n%s\nwant carol shown disabled", out)
	}
	if _, stderr, code := hitlRunWith(t, "", nil, "user", "disable", "nobody", "--db", db); code != 1 || !strings.Contains(stderr, "nobody") {
		t.Errorf("disabling nobody: exit %d, %s; want 1, no user", code, stderr)
	}
	mustRun(t, 0, "", "user", "enable", "carol", "--db", db)
	if out := mustRun(t, 0, "", "user", "ls", "--db", db); strings.Contains(out, "disabled") {
		t.Errorf("user ls after enable:\n%s\nwant no one disabled", out)
	}
	out = mustRun(t, 0, "", "user", "rm", "alice", "--db", db)
	if !strings.Contains(out, "removed alice") {
		t.Errorf("user rm printed %q", out)
	}
	if _, _, code := hitlRunWith(t, "", nil, "user", "rm", "alice", "--db", db); code != 1 {
		t.Errorf("removing alice twice: exit %d, want 1", code)
	}
	var users []hitl.User
	if err := json.Unmarshal([]byte(mustRun(t, 0, "", "user", "ls", "--json", "--db", db)), &users); err != nil || len(users) != 1 || users[0].Name != "carol" {
		t.Errorf("user ls --json after rm: %+v, %v; want carol alone", users, err)
	}
}

// TestSecretsNotInDatabase reads every byte of the database files: the
// token and the password are in none of them.
func TestSecretsNotInDatabase(t *testing.T) {
	turns.Parallel(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "hitl.db")
	token := strings.TrimSpace(mustRun(t, 0, "", "token", "create", "--name", "build-bot", "--db", db))
	const password = "correct-horse-battery"
	mustRun(t, 0, password+"\n", "user", "add", "alice", "--password-stdin", "--db", db)

	files, err := filepath.Glob(db + "*")
	if err != nil || len(files) == 0 {
		t.Fatalf("database files: %v %v", files, err)
	}
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	for what, secret := range map[string]string{"token": token, "token without its prefix": token[12:], "password": password} {
		if bytes.Contains(all, []byte(secret)) {
			t.Errorf("the database files hold the %s", what)
		}
	}
	if !bytes.Contains(all, []byte("$argon2id$")) {
		t.Error("no argon2id hash in the database files: is the test reading the right files?")
	}
}

// TestServeRefusesPublicAddressWithoutAuth: on a non-loopback address
// with no users or tokens, hitl serve will not start, and says how to
// fix it; --insecure-no-auth, or a token, lets it start.
func TestServeRefusesPublicAddressWithoutAuth(t *testing.T) {
	turns.Parallel(t)
	db := filepath.Join(t.TempDir(), "hitl.db")
	_, stderr, code := hitlRunWith(t, "", nil, "serve", "--addr", "0.0.0.0:0", "--db", db)
	if code != 1 || !strings.Contains(stderr, "refusing to listen on") || !strings.Contains(stderr, "hitl user add") ||
		!strings.Contains(stderr, "hitl token create") || !strings.Contains(stderr, "--insecure-no-auth") {
		t.Errorf("serve on 0.0.0.0 without auth: exit %d, want 1 and how to fix it:\n%s", code, stderr)
	}
	_, stderr, code = hitlRunWith(t, "", []string{"HITL_ADDR=0.0.0.0:0"}, "serve", "--db", db)
	if code != 1 || !strings.Contains(stderr, "refusing") {
		t.Errorf("serve with HITL_ADDR=0.0.0.0:0: exit %d, want 1:\n%s", code, stderr)
	}

	url := startPublic(t, db, "--insecure-no-auth")
	resp, err := http.Get(url + "/api/v1/interactions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("--insecure-no-auth, no credentials: %d, want 200", resp.StatusCode)
	}
}

// TestServePublicAddressWithToken: once a token exists, hitl serve starts
// on any address and wants the token.
func TestServePublicAddressWithToken(t *testing.T) {
	turns.Parallel(t)
	db := filepath.Join(t.TempDir(), "hitl.db")
	token := strings.TrimSpace(mustRun(t, 0, "", "token", "create", "--name", "build-bot", "--db", db))
	url := startPublic(t, db)
	resp, err := http.Get(url + "/api/v1/interactions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no credentials: %d, want 401", resp.StatusCode)
	}
	c := client.New(url, &client.Options{Token: token})
	if _, _, err := c.List(context.Background(), hitl.ListFilter{}); err != nil {
		t.Errorf("list with the token: %v", err)
	}
}

// listening matches hitl serve's log line with its URL.
var listening = regexp.MustCompile(`msg="hitl listening" url=(http://\S+)`)

// startPublic runs hitl serve on 0.0.0.0 (any port) with extra args and
// returns a loopback URL for it.
func startPublic(t *testing.T, db string, args ...string) string {
	t.Helper()
	p := start(t, append([]string{"serve", "--addr", "0.0.0.0:0", "--db", db}, args...)...)
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		<-p.done
	})
	var url string
	waitFor(t, "hitl serve to listen", func() bool {
		select {
		case <-p.done:
			t.Fatalf("hitl serve exited with %d:\n%s", p.code, p.stderr)
		default:
		}
		if m := listening.FindStringSubmatch(p.stderr.String()); m != nil {
			url = m[1]
			return true
		}
		return false
	})
	return strings.Replace(url, "localhost", "127.0.0.1", 1)
}

// TestCreatedTokenWorksAgainstRunningServer: a server started in local
// mode wants credentials once a token is made with the CLI while it runs;
// the token works with the Go client and with hitl ls (HITL_TOKEN), and a
// user added while it runs can log in.
func TestCreatedTokenWorksAgainstRunningServer(t *testing.T) {
	turns.Parallel(t)
	srv := startServer(t)
	anon := srv.client(t)
	if _, _, err := anon.List(context.Background(), hitl.ListFilter{}); err != nil {
		t.Fatalf("local mode, no credentials: %v", err)
	}
	token := strings.TrimSpace(mustRun(t, 0, "", "token", "create", "--name", "build-bot", "--role", "agent", "--db", srv.DB))
	waitFor(t, "the server to want credentials", func() bool {
		_, _, err := anon.List(context.Background(), hitl.ListFilter{})
		return hitl.ErrorCode(err) == hitl.EUNAUTHORIZED
	})

	agent := client.New(srv.URL, &client.Options{Token: token})
	in, _, err := agent.Create(context.Background(), hitl.CreateRequest{Question: "Deploy?", Targets: &hitl.Targets{Users: []string{"alice"}}})
	if err != nil {
		t.Fatalf("create with the token: %v", err)
	}
	if in.CreatedBy != "build-bot" {
		t.Errorf("created by %q, want build-bot", in.CreatedBy)
	}
	stdout, stderr, code := hitlRunWith(t, "", []string{"HITL_TOKEN=" + token}, "ls", "--server", srv.URL)
	if code != 0 || !strings.Contains(stdout, in.ID) {
		t.Errorf("hitl ls with HITL_TOKEN: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, stderr, code := hitlRunWith(t, "", nil, "ls", "--server", srv.URL); code == 0 || !strings.Contains(stderr, "authentication required") {
		t.Errorf("hitl ls without a token: exit %d, %s; want a failure saying authentication is required", code, stderr)
	}
	// An agent cannot answer, even its own question.
	if _, err := agent.Respond(context.Background(), in.ID, json.RawMessage(`"yes"`)); hitl.ErrorCode(err) != hitl.EFORBIDDEN {
		t.Errorf("the agent answers: %v, want forbidden", err)
	}

	mustRun(t, 0, "alice-password\n", "user", "add", "alice", "--password-stdin", "--db", srv.DB)
	body, _ := json.Marshal(map[string]string{"username": "alice", "password": "alice-password"})
	resp, err := http.Post(srv.URL+"/api/v1/auth/login", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(resp.Cookies()) == 0 {
		t.Fatalf("alice logs in: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	req, _ := http.NewRequest("POST", srv.URL+"/api/v1/interactions/"+in.ID+"/respond", strings.NewReader(`{"value":"shipped"}`))
	req.AddCookie(resp.Cookies()[0])
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("alice answers her question: %d, want 200", resp.StatusCode)
	}
	got, err := agent.Wait(context.Background(), in.ID)
	if err != nil || got.Status != hitl.StatusAnswered || got.Result.RespondedBy != "alice" {
		t.Errorf("the agent's wait: %+v, %v; want answered by alice", got, err)
	}
}

// TestServeAnswerRate: --answer-rate sets how many answers a person or
// token may send, in bursts of ten seconds' worth (at least one); 0 lifts
// the limit; a negative or unreadable rate is refused.
func TestServeAnswerRate(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	for _, c := range []struct {
		rate    string
		answers int
		limited int // the first answer refused with 429, and those after it; 0: none
	}{
		{"0.01", 3, 2}, // a burst of one
		{"0.25", 4, 3}, // a burst of two
		{"0", 105, 0},  // past the default burst of 100
	} {
		t.Run(c.rate, func(t *testing.T) {
			turns.Parallel(t)
			db := filepath.Join(t.TempDir(), "hitl.db")
			token := strings.TrimSpace(mustRun(t, 0, "", "token", "create", "--name", "root", "--role", "admin", "--db", db))
			admin := client.New(startPublic(t, db, "--answer-rate", c.rate), &client.Options{Token: token})
			for i := 1; i <= c.answers; i++ {
				in, _, err := admin.Create(t.Context(), hitl.CreateRequest{Question: "Deploy?"})
				if err != nil {
					t.Fatal(err)
				}
				_, err = admin.Respond(t.Context(), in.ID, json.RawMessage(`true`))
				switch refused := c.limited > 0 && i >= c.limited; {
				case refused && hitl.ErrorCode(err) != hitl.ERATELIMITED:
					t.Errorf("answer %d: %v, want rate limited", i, err)
				case !refused && err != nil:
					t.Errorf("answer %d: %v", i, err)
				}
			}
		})
	}
	for _, bad := range []string{"-1", "fast", "NaN", "Inf"} {
		if _, stderr, code := hitlRunWith(t, "", nil, "serve", "--answer-rate", bad, "--db", filepath.Join(t.TempDir(), "hitl.db")); code != 2 || !strings.Contains(stderr, "--answer-rate") {
			t.Errorf("--answer-rate %s: exit %d, %s; want 2 and a message about --answer-rate", bad, code, stderr)
		}
	}
}

// TestServeEmbedOrigin: hitl serve --embed-origin (repeatable, or
// HITL_EMBED_ORIGIN) lets exactly those origins' pages use the embedded
// prompt's routes; anything but an origin is refused at start.
func TestServeEmbedOrigin(t *testing.T) {
	turns.Parallel(t)
	db := filepath.Join(t.TempDir(), "hitl.db")
	mustRun(t, 0, "", "token", "create", "--name", "root", "--role", "admin", "--db", db)
	url := startPublic(t, db, "--embed-origin", "https://chat.example.com", "--embed-origin", "http://localhost:3000")
	for origin, want := range map[string]string{
		"https://chat.example.com": "https://chat.example.com",
		"http://localhost:3000":    "http://localhost:3000",
		"https://evil.example":     "",
	} {
		req, _ := http.NewRequest(http.MethodOptions, url+"/api/v1/interactions/x/respond", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != want {
			t.Errorf("preflight from %s: Access-Control-Allow-Origin %q, want %q", origin, got, want)
		}
	}
	for _, bad := range []string{"chat.example.com", "https://chat.example.com/app", "ftp://chat.example.com"} {
		if _, stderr, code := hitlRunWith(t, "", nil, "serve", "--embed-origin", bad, "--db", filepath.Join(t.TempDir(), "hitl.db")); code != 2 || !strings.Contains(stderr, "--embed-origin") {
			t.Errorf("--embed-origin %s: exit %d, %s; want 2 and a message about --embed-origin", bad, code, stderr)
		}
	}
	if _, stderr, code := hitlRunWith(t, "", []string{"HITL_EMBED_ORIGIN=https://ok.example not-an-origin"}, "serve", "--db", filepath.Join(t.TempDir(), "hitl.db")); code != 2 || !strings.Contains(stderr, "not-an-origin") {
		t.Errorf("HITL_EMBED_ORIGIN with a bad origin: exit %d, %s; want 2", code, stderr)
	}
}
