package slack

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

// syncBuffer is a log destination safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestVerify(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	body := []byte(`{"type":"url_verification","challenge":"abc"}`)
	ts := strconv.FormatInt(now.Unix(), 10)
	header := func(ts, sig string) http.Header {
		h := http.Header{}
		if ts != "" {
			h.Set("X-Slack-Request-Timestamp", ts)
		}
		if sig != "" {
			h.Set("X-Slack-Signature", sig)
		}
		return h
	}
	// Slack's documented example, so Sign matches Slack and not only itself.
	example := "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
	if got, want := Sign([]byte(example), "8f742231b10e8888abcd99yyyzzz85a5", "1531420618"), "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"; got != want {
		t.Fatalf("Sign of Slack's example: got %s, want %s", got, want)
	}
	tests := []struct {
		name   string
		header http.Header
		body   []byte
		want   error
	}{
		{"valid", header(ts, Sign(body, testSecret, ts)), body, nil},
		{"wrong secret", header(ts, Sign(body, "another-secret", ts)), body, errBadSignature},
		{"body changed", header(ts, Sign(body, testSecret, ts)), append([]byte(" "), body...), errBadSignature},
		{"timestamp changed", header(strconv.FormatInt(now.Unix()-1, 10), Sign(body, testSecret, ts)), body, errBadSignature},
		{"stale", header(strconv.FormatInt(now.Add(-6*time.Minute).Unix(), 10), Sign(body, testSecret, strconv.FormatInt(now.Add(-6*time.Minute).Unix(), 10))), body, errStale},
		{"from the future", header(strconv.FormatInt(now.Add(6*time.Minute).Unix(), 10), Sign(body, testSecret, strconv.FormatInt(now.Add(6*time.Minute).Unix(), 10))), body, errStale},
		{"no signature", header(ts, ""), body, errNoSignature},
		{"no timestamp", header("", Sign(body, testSecret, ts)), body, errNoSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Verify(tt.header, tt.body, testSecret, now); got != tt.want {
				t.Errorf("Verify: got %v, want %v", got, tt.want)
			}
		})
	}
	if err := Verify(header("12ab", "v0=00"), body, testSecret, now); err == nil {
		t.Errorf("Verify with a timestamp that is not a number: got nil, want an error")
	}
}

func TestHTTPSignatures(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	h := newHarness(t, harnessOptions{config: httpConfig(), log: slog.New(slog.NewTextHandler(logs, nil))})
	challenge := []byte(`{"type":"url_verification","token":"x","challenge":"c-h-a-l-l-e-n-g-e"}`)
	click := []byte(`payload=%7B%22type%22%3A%22block_actions%22%2C%22actions%22%3A%5B%5D%2C%22x%22%3A%22c-h-a-l-l-e-n-g-e%22%7D`)
	now := time.Now()
	for _, tt := range []struct {
		name   string
		secret string
		at     time.Time
		want   int
	}{
		{"valid", testSecret, now, http.StatusOK},
		{"wrong secret", "not-the-secret", now, http.StatusUnauthorized},
		{"stale", testSecret, now.Add(-6 * time.Minute), http.StatusUnauthorized},
	} {
		if code, _ := h.post(h.s.EventsHandler(), "application/json", challenge, tt.at, tt.secret, nil); code != tt.want {
			t.Errorf("events, %s: got %d, want %d", tt.name, code, tt.want)
		}
		if code, _ := h.post(h.s.InteractivityHandler(), "application/x-www-form-urlencoded", click, tt.at, tt.secret, nil); code != tt.want {
			t.Errorf("interactivity, %s: got %d, want %d", tt.name, code, tt.want)
		}
	}
	if code, body := h.post(h.s.EventsHandler(), "application/json", challenge, now, testSecret, nil); code != http.StatusOK || !strings.Contains(body, `"challenge":"c-h-a-l-l-e-n-g-e"`) {
		t.Errorf("url_verification: got %d %s", code, body)
	}
	if strings.Contains(logs.String(), "c-h-a-l-l-e-n-g-e") {
		t.Errorf("a refused request's body reached the log:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "refused a request claiming to come from Slack") {
		t.Errorf("refused requests are not logged:\n%s", logs.String())
	}

	// GET, and a request with no signature at all.
	rec := httptest.NewRecorder()
	h.s.EventsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/slack/events", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: got %d, want 405", rec.Code)
	}
	rec = httptest.NewRecorder()
	h.s.EventsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/slack/events", strings.NewReader(string(challenge))))
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("unsigned: got %d, want 401", rec.Code)
	}
}

func TestHTTPReplay(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	in := h.ask(hitl.CreateRequest{})
	_, row := h.waitPosted(in)
	body := reply("EvReplay1", slackAlice, testChannel, row.TS, "first")
	sent := time.Now()
	req := newSignedRequest(body, "application/json", sent, testSecret)
	sig, ts := req.Header.Get("X-Slack-Signature"), req.Header.Get("X-Slack-Request-Timestamp")

	if code, _ := h.post(h.s.EventsHandler(), "application/json", body, sent, testSecret, nil); code != http.StatusOK {
		t.Fatalf("first delivery: got %d", code)
	}
	wantResult(t, h.waitEnded(in.ID), `"first"`, "alice")
	h.waitUpdated(in)

	// The same request again (Slack's retry, or a replay within the
	// window): acknowledged, and acted on once.
	retry := http.Header{"X-Slack-Retry-Num": {"1"}, "X-Slack-Retry-Reason": {"http_timeout"}}
	if code, _ := h.post(h.s.EventsHandler(), "application/json", body, sent, testSecret, retry); code != http.StatusOK {
		t.Fatalf("retry: got %d, want 200", code)
	}
	// The old signature on a fresh timestamp: refused.
	replay := httptest.NewRequest(http.MethodPost, "/slack/events", bytes.NewReader(body))
	replay.Header.Set("X-Slack-Signature", sig)
	replay.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(time.Now().Unix()+1, 10))
	if ts == replay.Header.Get("X-Slack-Request-Timestamp") {
		t.Fatal("test needs a different timestamp")
	}
	rec := httptest.NewRecorder()
	h.s.EventsHandler().ServeHTTP(rec, replay)
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("replayed body with a new timestamp: got %d, want 401", rec.Code)
	}
	// A new event (another ID) from another user is handled: it is told
	// it is too late, which shows the retry above was not.
	if code, _ := h.post(h.s.EventsHandler(), "application/json", reply("EvReplay2", slackBob, testChannel, row.TS, "second"), time.Now(), testSecret, nil); code != http.StatusOK {
		t.Fatalf("second event: got %d", code)
	}
	h.fake.WaitFor("chat.postEphemeral", 1, nil)
	if got := h.get(in.ID); string(got.Result.Value) != `"first"` {
		t.Errorf("value: got %s, want the first answer", got.Result.Value)
	}
	h.stop() // waits for every request being handled
	var to []string
	for _, c := range h.fake.Calls("chat.postEphemeral") {
		to = append(to, c.Form.Get("user"))
	}
	if len(to) != 1 || to[0] != slackBob {
		t.Errorf("ephemeral messages to %v, want one, to bob: the retry must not be handled", to)
	}
}

func TestHTTPNotConfigured(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: socketConfig()}) // no signing secret
	code, _ := h.post(h.s.EventsHandler(), "application/json", []byte(`{"type":"url_verification"}`), time.Now(), testSecret, nil)
	if code != http.StatusNotFound {
		t.Errorf("without a signing secret: got %d, want 404", code)
	}
}

// TestHTTPWhileOff checks that Slack can verify the URLs before the
// channel is turned on, and that nothing is answered meanwhile.
func TestHTTPWhileOff(t *testing.T) {
	t.Parallel()
	cfg := httpConfig()
	cfg.Enabled = false
	h := newHarness(t, harnessOptions{config: cfg})
	h.ask(hitl.CreateRequest{})
	code, body := h.post(h.s.EventsHandler(), "application/json", []byte(`{"type":"url_verification","challenge":"ch"}`), time.Now(), testSecret, nil)
	if code != http.StatusOK || !strings.Contains(body, `"challenge":"ch"`) {
		t.Errorf("url_verification while off: got %d %s", code, body)
	}
	code, _ = h.post(h.s.EventsHandler(), "application/json", reply("EvOff", slackAlice, testChannel, "1.2", "yes"), time.Now(), testSecret, nil)
	if code != http.StatusOK {
		t.Errorf("event while off: got %d, want 200", code)
	}
	h.stop()
	if n := len(h.fake.Calls("")); n != 0 {
		t.Errorf("Slack was called %d times while off", n)
	}
}
