package ui_test

import (
	"testing"

	"github.com/hitl-sh/hitl/internal/turns"
)

// Every card says what happens at its deadline: the default the agent
// gets (on_timeout default), or that it stops; with the clock time.
func TestCardSaysWhatHappensAtTheDeadline(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	withDefault := srv.ask(t, map[string]any{"question": "Log level?", "interaction_type": "single_choice",
		"options":          []map[string]any{{"key": "info", "label": "Info"}, {"key": "debug", "label": "Debug"}},
		"default_response": "info", "on_timeout": "default", "timeout": 600})
	cancels := srv.ask(t, map[string]any{"question": "Deploy?", "interaction_type": "approval", "timeout": 600})
	defaultButCancels := srv.ask(t, map[string]any{"question": "Name?", "default_response": "x", "timeout": 600})
	p := openPage(t, srv)
	p.waitCardText(withDefault, "If unanswered by ")
	p.waitCardText(withDefault, "(9:5") // "(9:59 left)", not "(in 9:59 left)"
	p.waitCardText(withDefault, "the agent gets “Info”")
	p.waitCardText(cancels, "the agent stops")
	p.waitCardText(defaultButCancels, "the agent stops")
}
