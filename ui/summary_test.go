package ui_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestActionSummaryEverywhere: an action without a question of its own is
// named by what it will do — the command, the file and how much changes —
// in the card's title, its buttons' names, the compact row (which offers
// Approve and Reject), History, the detail view and its "Same session"
// list; the agent's own question stays the title, the summary beneath.
func TestActionSummaryEverywhere(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	session := map[string]any{"session_id": "s-7f3a"}
	status := srv.askAction(t, "Bash", map[string]any{"command": "git status"}, map[string]any{"session_id": "s-7f3a", "timeout": 600})
	restart := srv.askAction(t, "Bash", map[string]any{"command": "kubectl -n prod rollout restart deploy/api\nkubectl -n prod rollout status deploy/api"}, map[string]any{"session_id": "s-7f3a", "timeout": 600})
	write := srv.ask(t, map[string]any{"interaction_type": "action", "source_agent": "claude-code", "session_id": session["session_id"], "timeout": 600,
		"action": map[string]any{"name": "Write", "args": map[string]any{"file_path": "config/prod.yaml", "content": "a\nb\nc\nd\ne\nf\n"},
			"kind": "file.write", "input": map[string]any{"path": "config/prod.yaml", "content": "a\nb\nc\nd\ne\nf\n"}}})
	asked := srv.askAction(t, "Bash", map[string]any{"command": "make deploy"}, map[string]any{"question": "Ship the release?", "timeout": 600})

	p := openPage(t, srv, recordOutcomes())
	title := func(id string) string { return p.text(in(id, ".question")) }
	for _, id := range []string{status, restart, write, asked} {
		p.waitCard(id)
	}
	for id, want := range map[string]string{status: "git status", restart: "kubectl -n prod rollout restart deploy/api …", write: "Write config/prod.yaml (6 lines)", asked: "Ship the release?"} {
		if got := title(id); got != want {
			t.Errorf("card title = %q, want %q", got, want)
		}
	}
	if got := p.text(in(asked, ".card-summary")); got != "make deploy" {
		t.Errorf("beneath the agent's own question: %q, want the command", got)
	}
	name := func(id, sel string) string {
		return eval[string](p, fmt.Sprintf(`document.querySelector(%s)?.getAttribute("aria-label") || ""`, js(in(id, sel))))
	}
	if got, want := name(restart, ".btn-approve"), "Approve: kubectl -n prod rollout restart deploy/api …"; got != want {
		t.Errorf("Approve is named %q, want %q", got, want)
	}
	if got, want := name(asked, ".btn-reject"), "Reject: make deploy"; got != want {
		t.Errorf("Reject is named %q, want %q", got, want)
	}

	// Each card's code regions have names of their own (axe's
	// landmark-unique).
	regions := eval[[]string](p, `[...document.querySelectorAll("[role=region]")].map(r => r.getAttribute("aria-label") || "")`)
	seen := map[string]bool{}
	for _, r := range regions {
		if seen[r] {
			t.Errorf("two regions are named %q: %q", r, regions)
		}
		seen[r] = true
	}
	if !seen["Command: git status"] {
		t.Errorf("regions %q, want one named Command: git status", regions)
	}

	// The compact list: each action row says what it runs and offers
	// Approve and Reject, and nothing else.
	p.do(chromedp.Focus(chromedp.CSS("#triage-compact")), chromedp.KeyEvent(kb.Enter))
	p.waitJS(`document.getElementById("cards").classList.contains("is-compact")`)
	visible := func(id string) []string {
		return eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll(%s)].filter(b => b.offsetParent !== null).map(b => b.textContent.trim())`, js(in(id, ".actions-buttons button"))))
	}
	if got := strings.Join(visible(status), ","); got != "Reject,Approve" {
		t.Errorf("a compact action row shows the buttons %q, want Reject,Approve", got)
	}
	if os.Getenv("HITL_UPDATE_SCREENSHOTS") != "" {
		png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		writeDoc(t, "inbox-compact-actions.png", png)
	}
	if got := eval[float64](p, fmt.Sprintf(`document.querySelector(%s).getBoundingClientRect().height`, js(card(status)))); got > 90 {
		t.Errorf("a compact action row is %.0f px high, want one row", got)
	}
	p.click(status, ".btn-approve")
	p.waitOutcome(status, "Approved")
	// Reject on a closed row opens it, with the reason's field.
	p.click(restart, ".btn-reject")
	p.waitJS(fmt.Sprintf(`document.querySelector(%s).classList.contains("is-open") && document.activeElement?.tagName === "TEXTAREA" && document.activeElement.offsetParent !== null`, js(card(restart))))
	p.do(chromedp.KeyEvent("not now"), ctrlEnter())
	p.waitOutcome(restart, "Rejected")

	// History and the detail view name them the same way; "Same session"
	// lists the session's other calls by what they do.
	p.do(chromedp.Navigate(srv.URL + "/#history"))
	p.waitHistory("kubectl -n prod rollout restart deploy/api …", "git status")
	p.openDetail(status, "git status")
	p.waitDetailText("session", "Write config/prod.yaml (6 lines)")
	if got := p.detailText("session"); !strings.Contains(got, "kubectl -n prod rollout restart deploy/api …") || strings.Contains(got, "Run Bash?") {
		t.Errorf("Same session lists %q, want each call by what it does", got)
	}
}
