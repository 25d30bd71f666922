package ui_test

import (
	"github.com/hitl-sh/hitl/internal/turns"
	"strings"
	"testing"
)

// TestActionUseDefault: an action card whose review has a default
// decision says what the agent gets at the deadline and offers Use
// default, which answers with that decision now; an action without a
// default offers no such button.
func TestActionUseDefault(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.askAction(t, "Bash", map[string]any{"command": "rm -rf build/"}, map[string]any{
		"default_response": map[string]any{"decision": "reject", "message": "nobody reviewed it"},
		"on_timeout":       "default", "timeout": 3 * 3600})
	plain := srv.askAction(t, "Bash", map[string]any{"command": "ls"}, map[string]any{"timeout": 3 * 3600})
	wait := srv.wait(t, id)
	p := openPage(t, srv, recordOutcomes())
	p.waitCardText(id, "the agent gets “reject: nobody reviewed it”")
	p.waitCard(plain)
	if eval[bool](p, `!!document.querySelector(`+js(in(plain, ".stakes-use"))+`)`) {
		t.Error("an action without a default offers Use default")
	}
	if got := p.text(in(id, ".stakes-use .sr-only")); !strings.Contains(got, "(reject: nobody reviewed it)") {
		t.Errorf("Use default's name %q does not say the default", got)
	}
	p.click(id, ".stakes-use")
	assertValue(t, awaitResult(t, wait), `{"decision": "reject", "message": "nobody reviewed it"}`)
	p.waitOutcome(id, "Rejected")
	srv.stillPending(t, plain)
}
