package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// benchCommand is the shell command every dialect's hook input asks to
// run, and the command the rule the hooks phase makes allows.
const benchCommand = "git status"

// hookInputs are the hook inputs the hooks phase feeds "hitl hook
// <dialect>" on stdin, one per dialect hitl speaks, each asking to run
// benchCommand in the agent's own shape (the shapes of agents/testdata,
// trimmed; OpenCode's is what hitl's plugin sends). A test checks that each reads as that shell call.
var hookInputs = map[string]string{
	"claude-code": `{"session_id":"00000000-0000-0000-0000-000000000000","transcript_path":"/home/dev/.claude/projects/work/00000000-0000-0000-0000-000000000000.jsonl","cwd":"/work","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status","description":"Show the working tree status"},"tool_use_id":"toolu_00"}`,
	"codex":       `{"cwd":"/work","hook_event_name":"PreToolUse","model":"gpt-5.5","permission_mode":"default","session_id":"00000000-0000-0000-0000-000000000000","tool_input":{"command":"git status"},"tool_name":"Bash","tool_use_id":"call_00","transcript_path":"/home/dev/.codex/sessions/rollout.jsonl","turn_id":"00000000-0000-0000-0000-000000000000"}`,
	"gemini-cli":  `{"cwd":"/work","hook_event_name":"BeforeTool","session_id":"00000000-0000-0000-0000-000000000000","timestamp":"2026-01-01T00:00:00.000Z","tool_input":{"command":"git status"},"tool_name":"run_shell_command","transcript_path":"/home/dev/.gemini/tmp/work/chats/session.jsonl"}`,
	"copilot-cli": `{"cwd":"/work","sessionId":"00000000-0000-0000-0000-000000000000","timestamp":0,"toolArgs":{"command":"git status","description":"Show the working tree status"},"toolName":"bash"}`,
	"opencode":    `{"tool":"bash","sessionID":"ses_0","callID":"call_00","cwd":"/work","args":{"command":"git status","description":"Show the working tree status"}}`,
	"cursor":      `{"hook_event_name":"beforeShellExecution","conversation_id":"00000000-0000-0000-0000-000000000000","generation_id":"00000000-0000-0000-0000-000000000000","workspace_roots":["/work"],"model":"gpt-5","cursor_version":"2.0.77","user_email":"dev@example.com","command":"git status","cwd":"/work"}`,
	"cline":       `{"clineVersion":"3.0.65","timestamp":"2026-01-01T00:00:00.000Z","taskId":"00000000-0000-0000-0000-000000000000","sessionContext":{"rootSessionId":"00000000-0000-0000-0000-000000000000"},"workspaceRoots":["/work"],"userId":"user","agent_id":"agent_0","parent_agent_id":null,"hookName":"tool_call","iteration":1,"tool_call":{"id":"call_0","name":"run_commands","input":{"commands":["git status"]}},"preToolUse":{"toolName":"run_commands","parameters":{"commands":"[\"git status\"]"}}}`,
}

// hookInput returns dialect's input for call n, asking to run command: its
// session and call ids are n's own, as a new call's are (a call with the
// ids of another is that call asked again).
func hookInput(dialect string, n int, command string) []byte {
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
	r := strings.NewReplacer(
		"00000000-0000-0000-0000-000000000000", id,
		`"toolu_00"`, fmt.Sprintf(`"toolu_%d"`, n),
		`"call_00"`, fmt.Sprintf(`"call_%d"`, n),
		`"call_0"`, fmt.Sprintf(`"call_%d"`, n),
		`"ses_0"`, fmt.Sprintf(`"ses_%d"`, n),
		benchCommand, command)
	return []byte(r.Replace(hookInputs[dialect]))
}

// HookDialects returns the dialects the hooks phase measures, in order.
func HookDialects() []string {
	names := make([]string, 0, len(hookInputs))
	for name := range hookInputs {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// hookDecision reads the decision out of a hook's output, whatever the
// dialect: "allow", "deny" (or the dialect's other words, such as "ask"),
// or an error when the output is no decision at all.
func hookDecision(out []byte) (string, error) {
	var o struct {
		Specific *struct {
			PermissionDecision string `json:"permissionDecision"`
			Decision           *struct {
				Behavior string `json:"behavior"`
			} `json:"decision"`
		} `json:"hookSpecificOutput"`
		Decision           string `json:"decision"`
		PermissionDecision string `json:"permissionDecision"`
		Permission         string `json:"permission"`
		Cancel             *bool  `json:"cancel"`
	}
	if err := json.Unmarshal(out, &o); err != nil {
		return "", err
	}
	switch {
	case o.Specific != nil && o.Specific.PermissionDecision != "":
		return o.Specific.PermissionDecision, nil
	case o.Specific != nil && o.Specific.Decision != nil:
		return o.Specific.Decision.Behavior, nil
	case o.Decision != "":
		return o.Decision, nil
	case o.PermissionDecision != "":
		return o.PermissionDecision, nil
	case o.Permission != "":
		return o.Permission, nil
	case o.Cancel != nil && *o.Cancel:
		return "deny", nil
	case o.Cancel != nil:
		return "allow", nil
	}
	return "", errors.New("no decision in the hook's output")
}
