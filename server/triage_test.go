package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/server"
)

// listPage is a page of GET /api/v1/interactions.
type listPage struct {
	Interactions []hitl.Interaction `json:"interactions"`
	NextCursor   *string            `json:"next_cursor"`
}

// questionsOf returns the questions of the listed interactions, in order.
func questionsOf(list []hitl.Interaction) []string {
	out := []string{}
	for _, in := range list {
		out = append(out, in.Question)
	}
	return out
}

func TestListTriage(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	asks := []map[string]any{
		{"question": "Deploy build 1432?", "interaction_type": "approval", "timeout": 3600, "source_agent": "deployer"},
		{"question": "Deploy build 1433?", "interaction_type": "approval", "timeout": 60, "source_agent": "deployer", "context": "hotfix"},
		{"question": "Which environment?", "interaction_type": "single_choice", "options": []string{"a", "b"}, "timeout": 600, "source_agent": "planner", "context": "Staging is DOWN"},
		{"question": "Release notes?", "timeout": 200, "source_agent": "writer"},
	}
	for _, a := range asks {
		ts.mustDo(t, "POST", "/api/v1/interactions", a, http.StatusCreated, nil)
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"sort=deadline", []string{"Deploy build 1433?", "Release notes?", "Which environment?", "Deploy build 1432?"}},
		{"sort=newest", []string{"Release notes?", "Which environment?", "Deploy build 1433?", "Deploy build 1432?"}},
		{"agent=deployer&agent=writer&sort=deadline", []string{"Deploy build 1433?", "Release notes?", "Deploy build 1432?"}},
		{"type=single_choice&type=free_text", []string{"Release notes?", "Which environment?"}},
		{"q=" + url.QueryEscape("staging down"), []string{}},
		{"q=" + url.QueryEscape("STAGING is"), []string{"Which environment?"}},
		{"q=hotfix&agent=deployer", []string{"Deploy build 1433?"}},
		{"channel=slack", []string{}},
	}
	for _, tt := range tests {
		var page listPage
		ts.mustDo(t, "GET", "/api/v1/interactions?status=pending&"+tt.query, nil, http.StatusOK, &page)
		if d := cmp.Diff(tt.want, questionsOf(page.Interactions)); d != "" {
			t.Errorf("?%s (-want +got):\n%s", tt.query, d)
		}
	}

	// Paging by deadline, one at a time, gives the same order.
	var got []string
	cursor := ""
	for range 10 {
		var page listPage
		ts.mustDo(t, "GET", "/api/v1/interactions?status=pending&sort=deadline&limit=1&cursor="+url.QueryEscape(cursor), nil, http.StatusOK, &page)
		got = append(got, questionsOf(page.Interactions)...)
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	if d := cmp.Diff(tests[0].want, got); d != "" {
		t.Errorf("paged by deadline (-want +got):\n%s", d)
	}

	var counts hitl.InteractionCounts
	ts.mustDo(t, "GET", "/api/v1/interactions/counts?status=pending&agent=deployer", nil, http.StatusOK, &counts)
	want := hitl.InteractionCounts{
		Total:    2,
		ByAgent:  map[string]int{"deployer": 2, "planner": 1, "writer": 1},
		ByType:   map[hitl.Type]int{hitl.TypeApproval: 2},
		Expiring: 1,
	}
	if d := cmp.Diff(want, counts); d != "" {
		t.Errorf("counts (-want +got):\n%s", d)
	}
}

// TestListBySessionAndProject: ?session_id= and ?project= narrow the list
// and its counts, the project as the inbox shows it (the metadata's
// project, else its cwd, else a shell command's cwd).
func TestListBySessionAndProject(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	asks := []map[string]any{
		{"question": "Run the shop's tests?", "timeout": 600, "source_agent": "claude-code", "session_id": "s-1", "metadata": map[string]any{"cwd": "/home/dev/shop"}},
		{"question": "Deploy the shop?", "interaction_type": "approval", "timeout": 600, "source_agent": "codex", "session_id": "s-2", "metadata": map[string]any{"project": "/home/dev/shop", "cwd": "/tmp"}},
		{"question": "Deploy the blog?", "interaction_type": "approval", "timeout": 600, "source_agent": "codex", "session_id": "s-2", "metadata": map[string]any{"cwd": "/home/dev/blog"}},
		{"question": "No project?", "timeout": 600, "source_agent": "codex"},
	}
	for _, a := range asks {
		ts.mustDo(t, "POST", "/api/v1/interactions", a, http.StatusCreated, nil)
	}
	tests := []struct {
		query string
		want  []string
		total int
	}{
		{"project=" + url.QueryEscape("/home/dev/shop"), []string{"Deploy the shop?", "Run the shop's tests?"}, 2},
		{"project=" + url.QueryEscape("/home/dev/shop") + "&agent=codex", []string{"Deploy the shop?"}, 1},
		{"project=" + url.QueryEscape("/home/dev"), []string{}, 0},
		{"session_id=s-2", []string{"Deploy the blog?", "Deploy the shop?"}, 2},
		{"session_id=s-2&project=" + url.QueryEscape("/home/dev/blog"), []string{"Deploy the blog?"}, 1},
	}
	for _, tt := range tests {
		var page listPage
		ts.mustDo(t, "GET", "/api/v1/interactions?status=pending&"+tt.query, nil, http.StatusOK, &page)
		if d := cmp.Diff(tt.want, questionsOf(page.Interactions)); d != "" {
			t.Errorf("?%s (-want +got):\n%s", tt.query, d)
		}
		var counts hitl.InteractionCounts
		ts.mustDo(t, "GET", "/api/v1/interactions/counts?status=pending&"+tt.query, nil, http.StatusOK, &counts)
		if counts.Total != tt.total {
			t.Errorf("counts ?%s: total %d, want %d", tt.query, counts.Total, tt.total)
		}
	}
}

func TestListTriageRefusals(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	var page listPage
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"question": "a"}, http.StatusCreated, nil)
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"question": "b"}, http.StatusCreated, nil)
	ts.mustDo(t, "GET", "/api/v1/interactions?limit=1", nil, http.StatusOK, &page)
	long := make([]byte, hitl.MaxListQuery+1)
	for i := range long {
		long[i] = 'x'
	}
	many := url.Values{}
	for i := range hitl.MaxListValues + 1 {
		many.Add("agent", fmt.Sprint(i))
	}
	for _, q := range []string{
		"sort=oldest",
		"type=poll",
		"q=" + string(long),
		"project=" + strings.Repeat("x", hitl.MaxListProject+1),
		many.Encode(),
		"sort=deadline&cursor=" + url.QueryEscape(*page.NextCursor),
	} {
		for _, path := range []string{"/api/v1/interactions?", "/api/v1/interactions/counts?"} {
			if path == "/api/v1/interactions/counts?" && q[:4] == "sort" {
				continue // counts ignore the order and its cursor
			}
			status, body := ts.do(t, "GET", path+q, nil)
			var e struct {
				Error struct{ Code string } `json:"error"`
			}
			if err := json.Unmarshal(body, &e); status != http.StatusBadRequest || err != nil || e.Error.Code != hitl.EINVALID {
				t.Errorf("GET %s%.60s: %d %s, want 400 invalid", path, q, status, body)
			}
		}
	}
}

func TestCountsSeeWhatTheListSees(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, server.AuthOptions{})
	ts.ask(t, &hitl.Targets{Users: []string{"alice"}})
	ts.ask(t, &hitl.Targets{Users: []string{"bob"}})
	ts.ask(t, nil)
	for _, c := range []struct {
		who  actor
		want int
	}{{ts.alice, 2}, {ts.bob, 2}, {ts.admin, 3}, {ts.agent, 3}, {ts.otherAgent, 0}} {
		resp, body := ts.call(t, c.who, "GET", "/api/v1/interactions/counts?status=pending", nil)
		var counts hitl.InteractionCounts
		if err := json.Unmarshal(body, &counts); resp.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("%s: %d %s", c.who.name, resp.StatusCode, body)
		}
		if counts.Total != c.want {
			t.Errorf("%s: counts %+v, want total %d", c.who.name, counts, c.want)
		}
		_, body = ts.call(t, c.who, "GET", "/api/v1/interactions?status=pending", nil)
		var page listPage
		if err := json.Unmarshal(body, &page); err != nil || len(page.Interactions) != c.want {
			t.Errorf("%s: listed %d, want %d (as counted)", c.who.name, len(page.Interactions), c.want)
		}
	}
}
