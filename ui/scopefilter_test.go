package ui_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestFilterBySessionAndProject: a click on a card's project shows only
// that project's questions, a click on its session tag only that
// session's, each with a pressed chip under "Only" that clears it; the
// list is the server's (?project=, ?session_id=), and a question asked
// meanwhile shows only if it matches.
func TestFilterBySessionAndProject(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	shopA := srv.askAction(t, "Bash", map[string]any{"command": "go test ./..."}, map[string]any{"timeout": 3600,
		"session_id": "a1a1a1", "metadata": map[string]any{"cwd": "/home/dev/shop"}})
	shopB := srv.askAction(t, "Bash", map[string]any{"command": "make lint"}, map[string]any{"timeout": 7200,
		"session_id": "b2b2b2", "metadata": map[string]any{"cwd": "/home/dev/shop"}})
	blog := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Publish the post?", "timeout": 3 * 3600,
		"source_agent": "writer", "session_id": "b2b2b2", "metadata": map[string]any{"project": "/home/dev/blog"}})
	bare := srv.ask(t, map[string]any{"question": "Any notes?", "timeout": 4 * 3600})
	p := openPage(t, srv, countFetches())
	p.waitOrder(shopA, shopB, blog, bare)

	p.click(shopA, ".card-project")
	p.waitOrder(shopA, shopB)
	p.waitJS(`[...document.querySelectorAll("#triage-scope .chip[aria-pressed=true]")].map((c) => c.textContent).join("|") === "Project shop"`)
	// The list is the server's.
	p.waitJS(`window.__fetchLog.some((e) => e.startsWith("GET /api/v1/interactions?") && e.includes("project=%2Fhome%2Fdev%2Fshop") && e.endsWith(" 200"))`)

	// The session on top of the project.
	p.click(shopB, ".session-tag")
	p.waitOrder(shopB)
	p.waitJS(`[...document.querySelectorAll("#triage-scope .chip[aria-pressed=true]")].map((c) => c.textContent).join("|") === "Project shop|Session b2b2b2"`)

	// The project's chip clears the project: the session's two remain.
	p.do(chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll("#triage-scope .chip")].find((c) => c.textContent === "Project shop").click()`))
	p.waitOrder(shopB, blog)

	// Asked meanwhile: only the session's shows.
	other := srv.ask(t, map[string]any{"question": "Other session?", "timeout": 600, "session_id": "c3c3c3"})
	same := srv.ask(t, map[string]any{"question": "Same session?", "timeout": 600, "session_id": "b2b2b2"})
	p.waitOrder(same, shopB, blog)
	if got := p.cardOrder(); len(got) != 3 {
		t.Errorf("cards %v; %s of another session shows while filtered", got, other)
	}

	p.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#triage-scope .chip").click()`))
	p.waitOrder(other, same, shopA, shopB, blog, bare)
	if n := eval[int](p, `document.querySelectorAll("#triage-scope .chip").length`); n != 0 {
		t.Errorf("%d chips under Only with no session or project chosen", n)
	}
	if !eval[bool](p, `document.getElementById("triage-scope").closest(".triage-group").hidden`) {
		t.Error("the Only group shows with nothing in it")
	}
}
