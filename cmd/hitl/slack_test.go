package main

import (
	"bytes"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/slackfake"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/slack"
	_ "modernc.org/sqlite"
)

// startSlackServer runs "hitl serve" with extra flags over a new SQLite
// file and waits until it answers.
func startSlackServer(t *testing.T, extra ...string) *hitlServer {
	t.Helper()
	addr, db := freeAddr(t), filepath.Join(t.TempDir(), "hitl.db")
	s := &hitlServer{proc: start(t, append([]string{"serve", "--addr", addr, "--db", db}, extra...)...), URL: "http://" + addr, DB: db}
	t.Cleanup(func() {
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(15 * time.Second):
		}
	})
	hc := &http.Client{Timeout: time.Second}
	waitFor(t, "hitl serve to answer /healthz", func() bool {
		select {
		case <-s.done:
			t.Fatalf("hitl serve exited with %d:\n%s", s.code, s.stderr)
		default:
		}
		resp, err := hc.Get(s.URL + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return s
}

func slackCall(t *testing.T, method, url, contentType, body string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := (&http.Client{Transport: hitltest.ValidatingTransport(t, nil)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

func TestServeSlackConfig(t *testing.T) {
	turns.Parallel(t)
	s := startSlackServer(t)

	// A key to seal secrets, made beside the database, for its owner only.
	fi, err := os.Stat(s.DB + ".key")
	if err != nil {
		t.Fatalf("key file: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode: got %04o, want 0600", fi.Mode().Perm())
	}

	const path = "/api/human-feedback/slack/config"
	code, body := slackCall(t, "POST", s.URL+path, "application/json",
		`{"enabled":true,"bot_token":"xoxb-1111-2222-abcdefghijkl","channel_id":"C0123ABCD","signing_secret":"0123456789abcdef0123","delay_seconds":600}`, nil)
	if code != http.StatusOK {
		t.Fatalf("POST config: got %d %s", code, body)
	}
	code, body = slackCall(t, "GET", s.URL+path, "", "", nil)
	var view slack.ConfigView
	if code != http.StatusOK || json.Unmarshal([]byte(body), &view) != nil {
		t.Fatalf("GET config: got %d %s", code, body)
	}
	if view.BotToken != "xoxb-...ijkl" || view.SigningSecret != "...0123" || view.Transport != slack.TransportHTTP || !view.Enabled {
		t.Errorf("GET config: %+v", view)
	}

	db, err := sql.Open("sqlite", "file:"+s.DB+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var bot string
	if err := db.QueryRow(`SELECT bot_token FROM slack_config`).Scan(&bot); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(bot, "abcdefghijkl") || !strings.HasPrefix(bot, "v1:") {
		t.Errorf("stored bot token %q: want it sealed", bot)
	}

	// Slack's requests reach the channel, signed, whatever hitl's own
	// authentication says.
	events := s.URL + "/slack/events"
	if code, body := slackCall(t, "POST", events, "application/json", `{"type":"url_verification","challenge":"x"}`, nil); code != http.StatusUnauthorized || !strings.Contains(body, "Slack signature") {
		t.Errorf("unsigned event: got %d %s, want 401 for the signature", code, body)
	}
	challenge := `{"type":"url_verification","challenge":"c-123"}`
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	signed := http.Header{"X-Slack-Request-Timestamp": {ts}, "X-Slack-Signature": {slack.Sign([]byte(challenge), "0123456789abcdef0123", ts)}}
	if code, body := slackCall(t, "POST", events, "application/json", challenge, signed); code != http.StatusOK || !strings.Contains(body, `"challenge":"c-123"`) {
		t.Errorf("signed url_verification: got %d %s", code, body)
	}
}

func TestServeSlackFlags(t *testing.T) {
	turns.Parallel(t)
	s := startSlackServer(t, "--slack-bot-token", "xoxb-9999-8888-fromtheflags", "--slack-channel", "C0FLAGS01", "--slack-delay", "30")
	code, body := slackCall(t, "GET", s.URL+"/api/human-feedback/slack/config", "", "", nil)
	var view slack.ConfigView
	if code != http.StatusOK || json.Unmarshal([]byte(body), &view) != nil {
		t.Fatalf("GET config: got %d %s", code, body)
	}
	if !view.Enabled || view.ChannelID != "C0FLAGS01" || view.DelaySeconds != 30 || view.BotToken != "xoxb-...lags" {
		t.Errorf("config from flags: %+v", view)
	}
	want := []string{"enabled", "bot_token", "channel_id", "delay_seconds"}
	if strings.Join(view.FromEnvironment, ",") != strings.Join(want, ",") {
		t.Errorf("from_environment: got %v, want %v", view.FromEnvironment, want)
	}
	code, body = slackCall(t, "POST", s.URL+"/api/human-feedback/slack/config", "application/json", `{"channel_id":"C0OTHER01"}`, nil)
	if code != http.StatusConflict || !strings.Contains(body, "HITL_SLACK_CHANNEL_ID") {
		t.Errorf("changing a flag's value: got %d %s, want 409 naming the variable", code, body)
	}
}

func TestServeSlackBadFlags(t *testing.T) {
	turns.Parallel(t)
	for _, args := range [][]string{
		{"--slack-mention", "everyone"},
		{"--slack-delay", "soon"},
		{"--slack-enabled=maybe"},
		{"--slack-bot-token", "xoxp-a-user-token", "--slack-channel", "C0123ABCD"},
	} {
		_, stderr, code := hitlRun(t, append([]string{"serve", "--addr", freeAddr(t), "--db", filepath.Join(t.TempDir(), "x.db")}, args...)...)
		if code != 2 || !strings.Contains(stderr, "slack") {
			t.Errorf("hitl serve %s: exit %d, stderr %q; want 2 and a message about Slack", strings.Join(args, " "), code, stderr)
		}
	}
}

func TestServeSlackSecretKey(t *testing.T) {
	turns.Parallel(t)
	// A bad HITL_SECRET_KEY stops hitl serve, naming it.
	p := startEnv(t, []string{"HITL_SECRET_KEY=not-a-key"}, "serve", "--addr", freeAddr(t), "--db", filepath.Join(t.TempDir(), "x.db"))
	if code := p.wait(t); code != 1 || !strings.Contains(p.stderr.String(), "HITL_SECRET_KEY") {
		t.Errorf("a bad HITL_SECRET_KEY: exit %d, stderr %q; want 1 naming it", code, p.stderr)
	}

	// A good one is used: no key file is made.
	addr, db := freeAddr(t), filepath.Join(t.TempDir(), "hitl.db")
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, slack.KeySize))
	p = startEnv(t, []string{"HITL_SECRET_KEY=" + key}, "serve", "--addr", addr, "--db", db)
	waitFor(t, "hitl serve to answer", func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	})
	if code, body := slackCall(t, "POST", "http://"+addr+"/api/human-feedback/slack/config", "application/json", `{"bot_token":"xoxb-1-2-saved"}`, nil); code != http.StatusOK {
		t.Fatalf("save a token: got %d %s", code, body)
	}
	if _, err := os.Stat(db + ".key"); !os.IsNotExist(err) {
		t.Errorf("with HITL_SECRET_KEY, a key file was made anyway (%v)", err)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Errorf("shutdown: exit %d; stderr:\n%s", code, p.stderr)
	}
	c, err := slack.NewCipher(bytes.Repeat([]byte{1}, slack.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	sdb, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	var sealed string
	if err := sdb.QueryRow(`SELECT bot_token FROM slack_config`).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Open("bot_token", sealed); err != nil || got != "xoxb-1-2-saved" {
		t.Errorf("the token sealed with HITL_SECRET_KEY: opened %q, %v", got, err)
	}
}

// startEnv is start with variables added to the environment.
func startEnv(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(hitlBin, args...), stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Env = append(cleanEnv(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start hitl: %v", err)
	}
	go func() {
		err := p.cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.code = ee.ExitCode()
		} else if err != nil {
			p.code = -1
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// TestServeSlackEndToEnd runs hitl serve with Slack on (a fake Web API):
// a question asked over HTTP is posted, and once answered over HTTP its
// message is updated with who answered and through which channel.
func TestServeSlackEndToEnd(t *testing.T) {
	turns.Parallel(t)
	api := slackfake.New(t, nil)
	s := startSlackServer(t, "--slack-bot-token", slackfake.BotToken, "--slack-channel", "C0E2E0001",
		"--slack-delay", "0", "--slack-api-url", api.URL+"/")
	code, body := slackCall(t, "POST", s.URL+"/api/v1/interactions", "application/json", `{"interaction_type":"approval","question":"Ship it?"}`, nil)
	var in struct {
		ID string `json:"interaction_id"`
	}
	if code != http.StatusCreated || json.Unmarshal([]byte(body), &in) != nil {
		t.Fatalf("create: got %d %s", code, body)
	}
	about := func(c slackfake.Call) bool { return strings.Contains(c.Blocks(), in.ID) }
	api.WaitFor("chat.postMessage", 1, func(c slackfake.Call) bool { return about(c) && c.Form.Get("channel") == "C0E2E0001" })
	if code, body := slackCall(t, "POST", s.URL+"/api/v1/interactions/"+in.ID+"/respond", "application/json", `{"value":"approve"}`, nil); code != http.StatusOK {
		t.Fatalf("respond: got %d %s", code, body)
	}
	update := api.WaitFor("chat.update", 1, about)[0]
	for _, want := range []string{"Approved by", "via api at"} {
		if !strings.Contains(update.Blocks(), want) {
			t.Errorf("updated message lacks %q: %s", want, update.Blocks())
		}
	}
	if strings.Contains(update.Blocks(), `"actions"`) {
		t.Errorf("updated message still has buttons: %s", update.Blocks())
	}
}

// TestServeHelpHidesSlackSecrets checks that --help does not print the
// secrets' variables as defaults.
func TestServeHelpHidesSlackSecrets(t *testing.T) {
	turns.Parallel(t)
	p := startEnv(t, []string{"HITL_SLACK_BOT_TOKEN=xoxb-do-not-print-me", "HITL_SLACK_SIGNING_SECRET=also-secret-value"}, "serve", "--help")
	p.wait(t)
	out := p.stdout.String() + p.stderr.String()
	if !strings.Contains(out, "slack-bot-token") {
		t.Fatalf("help does not list the Slack flags:\n%s", out)
	}
	for _, secret := range []string{"do-not-print-me", "also-secret-value"} {
		if strings.Contains(out, secret) {
			t.Errorf("hitl serve --help prints %q", secret)
		}
	}
}
