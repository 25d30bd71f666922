package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/server"
)

// matrixRow is one route of the role × route matrix. do sends the request
// as a, about a new pending interaction id (created by build-bot for
// alice), and returns the HTTP status.
type matrixRow struct {
	name string
	do   func(t *testing.T, ts *authServer, a actor, id string) int
	// want is the status for: anonymous, the agent that asked, another
	// agent, the responder targeted, a responder not targeted, an admin.
	want [6]int
}

// send returns a row's do for a plain request; {id} in path and body is
// the interaction's id.
func send(method, path string, body string, headers ...string) func(*testing.T, *authServer, actor, string) int {
	return func(t *testing.T, ts *authServer, a actor, id string) int {
		var b any
		if body != "" {
			b = strings.ReplaceAll(body, "{id}", id)
		}
		resp, _ := ts.call(t, a, method, strings.ReplaceAll(path, "{id}", id), b, headers...)
		return resp.StatusCode
	}
}

const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"matrix","version":"1"}}}`

// matrix is every route of the server against every kind of caller.
var matrix = []matrixRow{
	// Native API.
	{"Create", send("POST", "/api/v1/interactions", `{"question":"Ship it?","targets":{"users":["alice"]}}`),
		[6]int{401, 201, 201, 403, 403, 201}},
	{"List", send("GET", "/api/v1/interactions", ""),
		[6]int{401, 200, 200, 200, 200, 200}},
	{"Get", send("GET", "/api/v1/interactions/{id}", ""),
		[6]int{401, 200, 404, 200, 404, 200}},
	{"Timeline", send("GET", "/api/v1/interactions/{id}/events", ""),
		[6]int{401, 200, 404, 200, 404, 200}},
	{"Wait", send("GET", "/api/v1/interactions/{id}/wait?timeout=0", ""),
		[6]int{401, 200, 404, 200, 404, 200}},
	// A responder the question does not target cannot see it, so answering
	// or claiming it is 404, as for an unknown id.
	{"Respond", send("POST", "/api/v1/interactions/{id}/respond", `{"value":"yes"}`),
		[6]int{401, 403, 403, 200, 404, 200}},
	{"Claim", send("POST", "/api/v1/interactions/{id}/claim", `{}`),
		[6]int{401, 403, 403, 200, 404, 200}},
	{"Release", send("DELETE", "/api/v1/interactions/{id}/claim", ""), // nobody's claim to release: 409
		[6]int{401, 403, 403, 409, 404, 409}},
	{"Cancel", send("POST", "/api/v1/interactions/{id}/cancel", `{"reason":"plan changed"}`),
		[6]int{401, 200, 404, 403, 403, 200}},
	{"UnknownAPIRoute", send("GET", "/api/v1/nope", ""),
		[6]int{401, 404, 404, 404, 404, 404}},

	// Live streams.
	{"WebSocket", func(t *testing.T, ts *authServer, a actor, _ string) int {
		c, status := ts.dialWS(t, a)
		if c != nil {
			_ = c.CloseNow()
		}
		return status
	}, [6]int{401, 101, 101, 101, 101, 101}},
	{"Events", func(t *testing.T, ts *authServer, a actor, _ string) int {
		s, status := ts.openSSE(t, a, "")
		if s != nil {
			s.Close()
		}
		return status
	}, [6]int{401, 200, 200, 200, 200, 200}},

	// The human_feedback contract.
	{"FeedbackSubmit", send("POST", "/api/human-feedback/submit", `{"unique_id":"{id}","response":"yes"}`),
		[6]int{401, 403, 403, 200, 404, 200}},
	{"FeedbackPending", send("GET", "/api/human-feedback/pending", ""),
		[6]int{401, 200, 200, 200, 200, 200}},

	// The AI-Parrot HITL contract.
	{"HITLRespond", send("POST", "/api/v1/agents/hitl/respond", `{"interaction_id":"{id}","value":"yes","response_type":"free_text"}`),
		[6]int{401, 403, 403, 200, 404, 200}},

	// MCP over streamable HTTP: API tokens only.
	{"MCP", send("POST", "/mcp", mcpInitialize, "Accept", "application/json, text/event-stream", "Content-Type", "application/json"),
		[6]int{401, 200, 200, 401, 401, 200}},

	// Operations.
	{"Healthz", send("GET", "/healthz", ""), [6]int{200, 200, 200, 200, 200, 200}},
	{"Readyz", send("GET", "/readyz", ""), [6]int{200, 200, 200, 200, 200, 200}},
	{"Metrics", send("GET", "/metrics", ""), [6]int{401, 403, 403, 403, 403, 200}},

	// The inbox's static files are public; its data is not.
	{"Inbox", send("GET", "/", ""), [6]int{200, 200, 200, 200, 200, 200}},
	{"UnknownAsset", send("GET", "/assets/nope.js", ""), [6]int{404, 404, 404, 404, 404, 404}},
	{"LoginPage", send("GET", "/login", ""), [6]int{200, 200, 200, 200, 200, 200}},
	{"LoginCSS", send("GET", "/login.css", ""), [6]int{200, 200, 200, 200, 200, 200}},

	// Authentication.
	{"Me", send("GET", "/api/v1/auth/me", ""), [6]int{401, 200, 200, 200, 200, 200}},
	{"LoginWrongPassword", send("POST", "/api/v1/auth/login", `{"username":"alice","password":"wrong password"}`),
		[6]int{401, 401, 401, 401, 401, 401}},
	// Last: it ends the people's sessions.
	{"Logout", send("POST", "/api/v1/auth/logout", ""), [6]int{200, 200, 200, 200, 200, 200}},
}

// TestRoleRouteMatrix runs every route as every kind of caller against a
// real server, over SQLite and PostgreSQL, and checks the status. A
// refused request must leave its interaction pending.
func TestRoleRouteMatrix(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	stores := []struct {
		name string
		db   func(testing.TB) hitltest.DB
	}{
		{"SQLite", hitltest.SQLiteDB},
		{"PostgreSQL", hitltest.PostgresDB},
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			turns.Parallel(t)
			ts := startAuthServer(t, st.db(t), server.AuthOptions{LoginBurst: 100, LoginRate: 100})
			actors := [6]actor{ts.anon, ts.agent, ts.otherAgent, ts.alice, ts.bob, ts.admin}
			for _, row := range matrix {
				for i, a := range actors {
					in := ts.ask(t, &hitl.Targets{Users: []string{"alice"}})
					got := row.do(t, ts, a, in.ID)
					if want := row.want[i]; got != want {
						t.Errorf("%s as %s: got %d, want %d", row.name, a.name, got, want)
					}
					if got >= 400 {
						if s := ts.status(t, in.ID); s != hitl.StatusPending {
							t.Errorf("%s as %s: refused with %d, but the interaction is now %s", row.name, a.name, got, s)
						}
					}
				}
			}
		})
	}
}

// TestListShowsOnlyVisible checks what each caller lists, over the native
// API and the human_feedback contract's pending list.
func TestListShowsOnlyVisible(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, server.AuthOptions{})
	toAlice := ts.ask(t, &hitl.Targets{Users: []string{"alice"}})
	toOps := ts.ask(t, &hitl.Targets{Groups: []string{"ops"}})
	open := ts.ask(t, nil)
	var fromOther hitl.Interaction
	resp, body := ts.call(t, ts.otherAgent, "POST", "/api/v1/interactions", map[string]any{"question": "Other?"})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create as other-bot: %d %s", resp.StatusCode, body)
	}
	mustUnmarshal(t, body, &fromOther)

	for _, tt := range []struct {
		a    actor
		want []string
	}{
		{ts.agent, []string{open.ID, toOps.ID, toAlice.ID}},
		{ts.otherAgent, []string{fromOther.ID}},
		{ts.alice, []string{fromOther.ID, open.ID, toAlice.ID}},
		{ts.bob, []string{fromOther.ID, open.ID, toOps.ID}},
		{ts.admin, []string{fromOther.ID, open.ID, toOps.ID, toAlice.ID}},
	} {
		var page struct{ Interactions []hitl.Interaction }
		_, body := ts.call(t, tt.a, "GET", "/api/v1/interactions?status=pending", nil)
		mustUnmarshal(t, body, &page)
		var got []string
		for _, in := range page.Interactions {
			got = append(got, in.ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s lists %v, want %v", tt.a.name, got, tt.want)
		}

		var pending struct {
			Requests []struct {
				InteractionID string `json:"interaction_id"`
			}
		}
		_, body = ts.call(t, tt.a, "GET", "/api/human-feedback/pending", nil)
		mustUnmarshal(t, body, &pending)
		got = nil
		for _, r := range pending.Requests {
			got = append(got, r.InteractionID)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: /api/human-feedback/pending lists %v, want %v", tt.a.name, got, tt.want)
		}
	}
}
