package ui_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// A fake Slack Web API with the methods the Slack settings' Test
// connection calls: auth.test, which accepts one bot token;
// apps.connections.open (Socket Mode), which accepts one app token; and
// chat.postMessage, which posts to one channel.
const (
	fakeBotToken = "xoxb-1111-2222-abcdefghijkl"   // masked: xoxb-...ijkl
	fakeAppToken = "xapp-1-A111-3333-mnopqrstuvwx" // masked: xapp-...uvwx
	fakeChannel  = "C0TEST0001"
)

type fakeSlack struct {
	*httptest.Server

	mu    sync.Mutex
	posts []url.Values // chat.postMessage calls
}

func newFakeSlack(t *testing.T) *fakeSlack {
	t.Helper()
	f := &fakeSlack{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /auth.test", func(w http.ResponseWriter, r *http.Request) {
		if r.ParseForm() != nil || r.PostForm.Get("token") != fakeBotToken {
			writeSlack(w, map[string]any{"ok": false, "error": "invalid_auth"})
			return
		}
		writeSlack(w, map[string]any{"ok": true, "url": "https://hitl-test.slack.com/", "team": "hitl-test", "user": "hitl", "team_id": "T0TEST", "user_id": "U0HITL"})
	})
	mux.HandleFunc("POST /apps.connections.open", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+fakeAppToken {
			writeSlack(w, map[string]any{"ok": false, "error": "invalid_auth"})
			return
		}
		writeSlack(w, map[string]any{"ok": true, "url": "wss://wss.slack.invalid/link/?ticket=test"})
	})
	mux.HandleFunc("POST /chat.postMessage", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.ParseForm() != nil || r.PostForm.Get("token") != fakeBotToken:
			writeSlack(w, map[string]any{"ok": false, "error": "invalid_auth"})
			return
		case r.PostForm.Get("channel") != fakeChannel:
			writeSlack(w, map[string]any{"ok": false, "error": "channel_not_found"})
			return
		}
		f.mu.Lock()
		f.posts = append(f.posts, r.PostForm)
		f.mu.Unlock()
		writeSlack(w, map[string]any{"ok": true, "channel": fakeChannel, "ts": "1700000000.000100"})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeSlack(w, map[string]any{"ok": false, "error": "unknown_method"})
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func writeSlack(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// postedTexts returns the text of every message posted so far.
func (f *fakeSlack) postedTexts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, p := range f.posts {
		out = append(out, p.Get("text"))
	}
	return out
}
