package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/server"
	"github.com/hitl-sh/hitl/tools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBodyErrorsNameFieldsAndJSONTypes checks that a body of the wrong
// shape is refused with a message in the caller's terms: fields and JSON
// types, never a Go type.
func TestBodyErrorsNameFieldsAndJSONTypes(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	var in hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"interaction_type": "approval", "question": "Ship?"}, http.StatusCreated, &in)
	respond := "/api/v1/interactions/" + in.ID + "/respond"
	cases := []struct {
		path, body, want string
	}{
		{"/api/v1/agents/hitl/respond", `[{"interaction_id": "x", "value": true}]`, "the body must be a JSON object, got an array"},
		{"/api/human-feedback/submit", `"yes"`, "the body must be a JSON object, got a string"},
		{"/api/v1/auth/login", `[]`, "the body must be a JSON object, got an array"},
		{"/api/v1/interactions", `7`, "the body must be a JSON object, got a number"},
		{"/api/v1/interactions", `{"question": "q", "timeout": "5"}`, "field timeout must be a number, got a string"},
		{"/api/v1/interactions", `{"question": true}`, "field question must be a string, got true or false"},
		{"/api/v1/interactions", `{"question": "q", "metadata": [1]}`, "field metadata must be a JSON object, got an array"},
		{"/api/v1/interactions", `{"question": "q", "targets": {"users": [1]}}`, "each item of field targets.users must be a string, got a number"},
		{"/api/v1/interactions", `{"question": "q", "targets": []}`, "field targets must be a JSON object, got an array"},
		{"/api/v1/interactions", `{"question": "q", "deadline": "tomorrow"}`, "a time must be an RFC 3339 string, such as 2030-01-02T15:04:05Z"},
		{"/api/v1/interactions", `{"question": "q", "options": 3}`, "options must be an array of strings or {key,label,description} objects"},
		{"/api/v1/interactions", `{"question": `, "malformed JSON: syntax error at byte 13"},
		{"/api/v1/agents/hitl/respond", `{"interaction_id": 12, "value": true}`, "field interaction_id must be a string, got a number"},
		{"/api/human-feedback/submit", `{"unique_id": ["a"], "response": "x"}`, "field unique_id must be a string, got an array"},
		{respond, `{"value": true, "channel": 1}`, "field channel must be a string, got a number"},
		{"/api/v1/interactions/" + in.ID + "/cancel", `{"reason": {}}`, "field reason must be a string, got an object"},
		// An answer without a value is one mistake, whether the field is
		// absent or null, on every respond route.
		{respond, `{}`, "value is required"},
		{respond, `{"value": null}`, "value is required"},
		{"/api/v1/agents/hitl/respond", `{"interaction_id": "` + in.ID + `"}`, "value is required"},
		{"/api/v1/agents/hitl/respond", `{"interaction_id": "` + in.ID + `", "value": null}`, "value is required"},
		{"/api/human-feedback/submit", `{"unique_id": "` + in.ID + `"}`, "response is required"},
		{"/api/human-feedback/submit", `{"unique_id": "` + in.ID + `", "response": null}`, "response is required"},
	}
	for _, tc := range cases {
		status, raw := ts.do(t, "POST", tc.path, tc.body)
		var e apiError
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Errorf("POST %s %s: body %s is not a JSON error", tc.path, tc.body, raw)
			continue
		}
		if status != http.StatusBadRequest || e.Error.Code != hitl.EINVALID || e.Error.Message != tc.want {
			t.Errorf("POST %s %s: %d %s %q, want 400 invalid %q", tc.path, tc.body, status, e.Error.Code, e.Error.Message, tc.want)
		}
		for _, goName := range []string{"server.", "hitl.", "float64", "struct", "map[", "[]"} {
			if strings.Contains(e.Error.Message, goName) {
				t.Errorf("POST %s %s: message %q names a Go type (%s)", tc.path, tc.body, e.Error.Message, goName)
			}
		}
	}
	var still hitl.Interaction
	ts.mustDo(t, "GET", "/api/v1/interactions/"+in.ID, nil, http.StatusOK, &still)
	if still.Status != hitl.StatusPending {
		t.Errorf("after refused answers: %s, want pending", still.Status)
	}
}

// TestBodyMustBeUnicode checks that text that is not Unicode is refused
// rather than silently changed to U+FFFD.
func TestBodyMustBeUnicode(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	for _, tc := range []struct{ name, body, want string }{
		{"invalid UTF-8", "{\"question\": \"caf\xe9?\"}", "request body is not valid UTF-8"},
		{"invalid UTF-8 in a field name", "{\"question\": \"q\", \"x\xff\": 1}", "request body is not valid UTF-8"},
		{"lone high surrogate", `{"question": "a\ud800b"}`, "request body has an unpaired UTF-16 surrogate escape at byte 15, which is not a character"},
		{"lone low surrogate", `{"question": "\udc00"}`, "request body has an unpaired UTF-16 surrogate escape at byte 14, which is not a character"},
		{"high surrogate at the end", `{"question": "q", "context": "\ud83d"}`, "request body has an unpaired UTF-16 surrogate escape at byte 30, which is not a character"},
	} {
		status, raw := ts.do(t, "POST", "/api/v1/interactions", tc.body)
		var e apiError
		_ = json.Unmarshal(raw, &e)
		if status != http.StatusBadRequest || e.Error.Message != tc.want {
			t.Errorf("%s: %d %s, want 400 %q", tc.name, status, raw, tc.want)
		}
	}
	var list struct {
		Interactions []hitl.Interaction `json:"interactions"`
	}
	ts.mustDo(t, "GET", "/api/v1/interactions", nil, http.StatusOK, &list)
	if len(list.Interactions) != 0 {
		t.Errorf("%d interactions created from refused bodies, want none", len(list.Interactions))
	}
	// Escapes that are characters are fine: a pair, and an escaped
	// backslash before a u.
	var in hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", `{"question": "Ship \ud83d\ude80 \\ud800?"}`, http.StatusCreated, &in)
	if in.Question != `Ship 🚀 \ud800?` {
		t.Errorf("question %q, want %q", in.Question, `Ship 🚀 \ud800?`)
	}
}

// slowBodyServer serves a hitl server through an httptest server (no
// server-wide timeouts), with bodies given timeout to arrive.
func slowBodyServer(t *testing.T, timeout time.Duration) *httptest.Server {
	t.Helper()
	return hitltest.Start(t, &hitltest.Options{Prepare: func(s *server.Server) { server.SetBodyTimeout(s, timeout) }}).Server
}

// TestSlowBodyTimesOut checks that a client sending its body slowly, or
// not at all, is answered 408 and let go, on the unauthenticated login
// route as anywhere.
func TestSlowBodyTimesOut(t *testing.T) {
	turns.Parallel(t)
	hs := slowBodyServer(t, 200*time.Millisecond)
	for _, path := range []string{"/api/v1/auth/login", "/api/v1/interactions"} {
		c, err := net.Dial("tcp", hs.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// Fails the test rather than hanging when nothing bounds the body.
		_ = c.SetDeadline(time.Now().Add(15 * time.Second))
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"user", path, hs.Listener.Addr())
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s: no answer to a stalled body: %v", path, err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e apiError
		_ = json.Unmarshal(raw, &e)
		if resp.StatusCode != http.StatusRequestTimeout || e.Error.Code != "request_timeout" {
			t.Errorf("%s: %d %s, want 408 request_timeout", path, resp.StatusCode, raw)
		}
		if !resp.Close {
			t.Errorf("%s: the connection is kept open after a body that timed out", path)
		}
	}
}

// signedRoutes is a Slack channel whose signed routes only read their
// bodies, reporting how that went; it has no configuration.
type signedRoutes struct{ read chan error }

func (signedRoutes) Config(context.Context) (hitl.SlackConfigView, error) {
	return hitl.SlackConfigView{}, hitl.Errorf(hitl.EUNAVAILABLE, "no configuration")
}

func (signedRoutes) SetConfig(context.Context, hitl.SlackConfigUpdate) (hitl.SlackConfigView, error) {
	return hitl.SlackConfigView{}, hitl.Errorf(hitl.EUNAVAILABLE, "no configuration")
}

func (signedRoutes) Test(context.Context, *hitl.SlackConfigUpdate) (hitl.SlackTestResult, error) {
	return hitl.SlackTestResult{}, hitl.Errorf(hitl.EUNAVAILABLE, "no configuration")
}

func (s signedRoutes) EventsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		s.read <- err
	})
}

func (s signedRoutes) InteractivityHandler() http.Handler { return s.EventsHandler() }

// TestSignedRouteBodyTime checks the bound on the time a body may take on
// a signed route (Slack's requests, which read their bodies before any
// credential is checked), which is served before authentication.
func TestSignedRouteBodyTime(t *testing.T) {
	turns.Parallel(t)
	read := make(chan error, 1)
	hs := hitltest.Start(t, &hitltest.Options{
		NoValidation: true, // the channel's answers are not the API's
		Server:       &server.Options{Slack: signedRoutes{read: read}},
		Prepare:      func(s *server.Server) { server.SetBodyTimeout(s, 200*time.Millisecond) },
	}).Server
	c, err := net.Dial("tcp", hs.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
	select {
	case err := <-read:
		if err == nil {
			t.Errorf("a stalled body was read to its end")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("a stalled body is still being read after 15 s")
	}
}

// TestBodyDeadlineEndsWithTheBody checks that the body's deadline does not
// reach past the body: a call that reads its body and then waits longer
// (an MCP tool call over streamable HTTP) is answered, and so is a
// long-poll on a connection that sent a body before.
func TestBodyDeadlineEndsWithTheBody(t *testing.T) {
	turns.Parallel(t)
	const timeout = 100 * time.Millisecond
	hs := slowBodyServer(t, timeout)

	tr := &http.Transport{MaxConnsPerHost: 1}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", HTTPClient: &http.Client{Transport: &http.Transport{}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tools.AskHumanName, Arguments: map[string]any{"question": "Still there?", "interaction_type": "approval"}})
		if err != nil {
			t.Errorf("call: %v", err)
		}
		done <- res
	}()
	in := waitPending(t, hc, hs.URL)
	// Longer than the body may take: a deadline left behind would have
	// ended the call by now (net/http takes a failed read as a hang-up).
	<-time.After(3 * timeout)
	status, raw := sendWith(t, hc, "POST", hs.URL+"/api/v1/interactions/"+in.ID+"/respond", `{"value": true}`)
	if status != http.StatusOK {
		t.Fatalf("respond: %d %s", status, raw)
	}
	if res := <-done; res == nil || res.IsError {
		t.Errorf("the tool call ended with %+v, want the answer", res)
	}

	// The same connection (one per host) sent a body above; a long-poll on
	// it outlasts the body's deadline.
	ask := `{"question": "Later?"}`
	status, raw = sendWith(t, hc, "POST", hs.URL+"/api/v1/interactions", ask)
	var later hitl.Interaction
	if status != http.StatusCreated || json.Unmarshal(raw, &later) != nil {
		t.Fatalf("create: %d %s", status, raw)
	}
	status, raw = sendWith(t, hc, "GET", hs.URL+"/api/v1/interactions/"+later.ID+"/wait?timeout=0.5", "")
	if status != http.StatusOK || !strings.Contains(string(raw), `"status":"pending"`) {
		t.Errorf("wait: %d %s, want 200 still pending", status, raw)
	}
}

// waitPending waits for the one pending interaction and returns it.
func waitPending(t *testing.T, hc *http.Client, base string) hitl.Interaction {
	t.Helper()
	var list struct {
		Interactions []hitl.Interaction `json:"interactions"`
	}
	hitltest.WaitFor(t, "a pending interaction", func() bool {
		status, raw := sendWith(t, hc, "GET", base+"/api/v1/interactions?status=pending", "")
		return status == http.StatusOK && json.Unmarshal(raw, &list) == nil && len(list.Interactions) == 1
	})
	return list.Interactions[0]
}

// sendWith makes a request with hc and returns the status and body.
func sendWith(t *testing.T, hc *http.Client, method, url, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}
