package slackfake

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// answer is a Web API method's reply to an accepted call.
type answer func(r *http.Request, c Call) map[string]any

// routes registers the Web API methods, the Socket Mode endpoint, and
// unknown_method for the rest.
func (s *Server) routes() {
	for name, a := range map[string]answer{
		"auth.test":             s.authTest,
		"chat.postMessage":      s.postMessage,
		"chat.update":           s.update,
		"chat.postEphemeral":    s.postEphemeral,
		"users.info":            s.userInfo,
		"views.open":            s.openView,
		"apps.connections.open": s.openConnection,
	} {
		s.mux.HandleFunc("/"+name, s.method(name, a))
	}
	s.mux.HandleFunc("/link/", s.socket)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/")
		s.method(name, func(*http.Request, Call) map[string]any { return failure("unknown_method") })(w, r)
	})
}

// method wraps a Web API method: it records the call, refuses it as Slack
// does when its token is missing, unknown or of the wrong type, and
// answers with JSON.
func (s *Server) method(name string, a answer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := Call{Method: name, Form: url.Values{}}
		body, _ := io.ReadAll(r.Body)
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			_ = json.Unmarshal(body, &c.Body)
		} else if form, err := url.ParseQuery(string(body)); err == nil {
			c.Form = form
		}
		c.Token = bearer(r, c.Form)
		accepted := s.record(c)
		var reply map[string]any
		switch app := strings.HasPrefix(c.Token, "xapp-"); {
		case c.Token == "":
			reply = failure("not_authed")
		case !accepted:
			reply = failure("invalid_auth")
		case app != (name == "apps.connections.open"):
			reply = failure("not_allowed_token_type")
		default:
			reply = a(r, c)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(reply)
	}
}

// bearer returns the token of a request: its Authorization header, or its
// token form field (both of which Slack accepts).
func bearer(r *http.Request, form url.Values) string {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && tok != "" {
		return tok
	}
	return form.Get("token")
}

// failure is the answer of a call that failed with code.
func failure(code string) map[string]any {
	return map[string]any{"ok": false, "error": code}
}

// authTest names the workspace and the bot.
func (s *Server) authTest(*http.Request, Call) map[string]any {
	return map[string]any{"ok": true, "url": "https://" + Team + ".slack.com/", "team": Team, "user": "hitl",
		"team_id": "T0TEST", "user_id": "U0HITL"}
}

// knownChannel reports whether channel exists.
func (s *Server) knownChannel(channel string) bool {
	return len(s.channels) == 0 || s.channels[channel]
}

// postMessage posts a message, unless FailPosts set an error or the
// channel does not exist.
func (s *Server) postMessage(_ *http.Request, c Call) map[string]any {
	s.mu.Lock()
	fail := s.failPost
	s.mu.Unlock()
	channel := c.Form.Get("channel")
	switch {
	case fail != "":
		return failure(fail)
	case !s.knownChannel(channel):
		return failure("channel_not_found")
	}
	return map[string]any{"ok": true, "channel": channel, "ts": s.newTS()}
}

// update changes a message.
func (s *Server) update(_ *http.Request, c Call) map[string]any {
	channel := c.Form.Get("channel")
	if !s.knownChannel(channel) {
		return failure("channel_not_found")
	}
	return map[string]any{"ok": true, "channel": channel, "ts": c.Form.Get("ts")}
}

// postEphemeral shows a message to one user.
func (s *Server) postEphemeral(_ *http.Request, c Call) map[string]any {
	if !s.knownChannel(c.Form.Get("channel")) {
		return failure("channel_not_found")
	}
	return map[string]any{"ok": true, "message_ts": s.newTS()}
}

// userInfo describes a user SetUser made known.
func (s *Server) userInfo(_ *http.Request, c Call) map[string]any {
	id := c.Form.Get("user")
	s.mu.Lock()
	email, ok := s.users[id]
	s.mu.Unlock()
	if !ok {
		return failure("user_not_found")
	}
	return map[string]any{"ok": true, "user": map[string]any{
		"id": id, "name": strings.ToLower(id), "profile": map[string]any{"email": email}}}
}

// openView opens a modal.
func (s *Server) openView(*http.Request, Call) map[string]any {
	return map[string]any{"ok": true, "view": map[string]any{"id": "V0001"}}
}

// openConnection hands out a Socket Mode URL with a ticket for the app
// token, on the host the call reached.
func (s *Server) openConnection(r *http.Request, c Call) map[string]any {
	return map[string]any{"ok": true, "url": "ws://" + r.Host + "/link/?ticket=" + s.sock.ticket(c.Token)}
}
