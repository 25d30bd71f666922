package codextest

import (
	"testing"

	"github.com/hitl-sh/hitl/internal/agenttest"
)

// HookReply is what a CommandHook does once it has recorded its input.
type HookReply = agenttest.HookReply

// Decision returns a reply that answers with v marshalled as JSON and
// exits 0.
func Decision(v any) HookReply { return agenttest.Decision(v) }

// CommandHook is a hook program for Codex's "type": "command" hooks: a
// shell script that records every input it is given on standard input and
// answers as its HookReply says (see agenttest.CommandHook).
type CommandHook struct {
	*agenttest.CommandHook
}

// NewCommandHook writes a hook script into a new directory of the test's.
func NewCommandHook(t testing.TB, reply HookReply) *CommandHook {
	t.Helper()
	return &CommandHook{agenttest.NewCommandHook(t, "Codex", reply)}
}

// Hook returns a "type": "command" hook object running h, with a timeout
// in seconds when timeout is above 0.
func (h *CommandHook) Hook(timeout int) map[string]any {
	return CommandHookConfig(h.Command, timeout)
}
