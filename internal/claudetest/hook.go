package claudetest

import (
	"testing"

	"github.com/hitl-sh/hitl/internal/agenttest"
)

// HookReply is what a CommandHook does once it has recorded its input.
type HookReply = agenttest.HookReply

// Decision returns a reply that answers with v marshalled as JSON and
// exits 0.
func Decision(v any) HookReply { return agenttest.Decision(v) }

// CommandHook is a hook program for Claude Code's "type": "command" hooks: a
// shell script that records every input it is given on standard input and
// answers as its HookReply says (see agenttest.CommandHook).
type CommandHook struct {
	*agenttest.CommandHook
}

// NewCommandHook writes a hook script into a new directory of the test's.
func NewCommandHook(t testing.TB, reply HookReply) *CommandHook {
	t.Helper()
	return &CommandHook{agenttest.NewCommandHook(t, "Claude Code", reply)}
}

// Hook returns a "type": "command" hook object running h, with a timeout
// in seconds when timeout is above 0.
func (h *CommandHook) Hook(timeout int) map[string]any {
	return CommandHookConfig(h.Command, timeout)
}

// Hooks returns settings that run hook (a "type": "command" or
// "type": "http" hook object) on event (PreToolUse, PermissionRequest, …)
// for tools matching matcher. Add keys such as "permissions" to the map.
func Hooks(event, matcher string, hook any) map[string]any {
	return map[string]any{
		"hooks": map[string]any{
			event: []any{map[string]any{"matcher": matcher, "hooks": []any{hook}}},
		},
	}
}

// CommandHookConfig returns a "type": "command" hook object running the
// shell command line command (such as "hitl hook claude-code"), with a
// timeout in seconds when timeout is above 0.
func CommandHookConfig(command string, timeout int) map[string]any {
	m := map[string]any{"type": "command", "command": command}
	if timeout > 0 {
		m["timeout"] = timeout
	}
	return m
}
