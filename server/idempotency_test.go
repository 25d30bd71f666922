package server_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/server"
)

// TestRespondIdempotencyKey retries answers on the three respond routes
// with an Idempotency-Key: the same caller, value and key get the first
// 200 again, body and all; another value, key or caller still get the
// conflict (409, or 404 with code conflict on the AI-Parrot HITL
// contract's route, as that contract has it).
func TestRespondIdempotencyKey(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, server.AuthOptions{})
	routes := []struct {
		name     string
		path     func(id string) string
		body     func(id, value string) string
		conflict int
	}{
		{"native", func(id string) string { return "/api/v1/interactions/" + id + "/respond" },
			func(_, value string) string { return `{"value":` + value + `}` }, http.StatusConflict},
		{"AI-Parrot HITL contract", func(string) string { return "/api/v1/agents/hitl/respond" },
			func(id, value string) string { return `{"interaction_id":"` + id + `","value":` + value + `}` }, http.StatusNotFound},
		{"human_feedback contract", func(string) string { return "/api/human-feedback/submit" },
			func(id, value string) string { return `{"unique_id":"` + id + `","response":` + value + `}` }, http.StatusConflict},
	}
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			in := ts.ask(t, nil)
			send := func(a actor, value, key string) (int, []byte) {
				t.Helper()
				var headers []string
				if key != "" {
					headers = []string{hitl.IdempotencyKeyHeader, key}
				}
				resp, body := ts.call(t, a, "POST", rt.path(in.ID), rt.body(in.ID, value), headers...)
				return resp.StatusCode, body
			}
			status, first := send(ts.alice, `"ship it"`, "answer-1")
			if status != http.StatusOK {
				t.Fatalf("first answer: %d %s", status, first)
			}
			status, again := send(ts.alice, `"ship it"`, "answer-1")
			if status != http.StatusOK || !bytes.Equal(first, again) {
				t.Errorf("retry: %d %s; want 200 and the first body %s", status, again, first)
			}
			for _, tt := range []struct {
				name       string
				a          actor
				value, key string
			}{
				{"another value", ts.alice, `"hold it"`, "answer-1"},
				{"another key", ts.alice, `"ship it"`, "answer-2"},
				{"no key", ts.alice, `"ship it"`, ""},
				{"another person", ts.bob, `"ship it"`, "answer-1"},
			} {
				status, body := send(tt.a, tt.value, tt.key)
				if status != rt.conflict || !strings.Contains(string(body), `"code":"conflict"`) {
					t.Errorf("%s: %d %s, want %d with code conflict", tt.name, status, body, rt.conflict)
				}
			}
		})
	}

	t.Run("bad key", func(t *testing.T) {
		in := ts.ask(t, nil)
		resp, body := ts.call(t, ts.alice, "POST", "/api/v1/interactions/"+in.ID+"/respond", `{"value":"x"}`,
			hitl.IdempotencyKeyHeader, strings.Repeat("k", hitl.MaxKeyLen+1))
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Idempotency-Key") {
			t.Errorf("overlong key: %d %s, want 400 naming the header", resp.StatusCode, body)
		}
		if got := ts.status(t, in.ID); got != hitl.StatusPending {
			t.Errorf("after a refused key: %s, want pending", got)
		}
	})
}

// TestRespondIdempotencyKeyAfterRestart retries an answer whose reply was
// lost after the server restarted: the key was stored with the answer.
func TestRespondIdempotencyKeyAfterRestart(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	in := ts.create(t, map[string]any{"question": "Code?", "timeout": 600})
	path := "/api/v1/interactions/" + in.ID + "/respond"
	answer := func(ts *testServer) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest("POST", ts.URL+path, strings.NewReader(`{"value":"582491"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(hitl.IdempotencyKeyHeader, "0b6f6a4e-answer")
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(resp.Body); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, buf.Bytes()
	}
	status, first := answer(ts)
	if status != http.StatusOK {
		t.Fatalf("answer: %d %s", status, first)
	}
	ts.Stop()
	ts2 := startTestServer(t, ts.Path)
	status, again := answer(ts2)
	if status != http.StatusOK || !bytes.Equal(first, again) {
		t.Errorf("retry after restart: %d %s; want 200 and the first body %s", status, again, first)
	}
}
