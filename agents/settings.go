package agents

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/hitl-sh/hitl/tools"
)

// The tools whose calls the printed settings send for review unless told
// otherwise: those that run commands or change files.
const (
	CodexMatcher  = "^(Bash|apply_patch)$"
	GeminiMatcher = "^(run_shell_command|write_file|replace)$"
	// CopilotMatcher is bare: Copilot CLI matches the whole tool name, and
	// a matcher with parentheses, or ending in $, matches nothing.
	CopilotMatcher = "bash|create|edit"
)

// Settings is the part of an agent's configuration that runs hitl's
// command hook: Codex's hooks.json, the "hooks" of Gemini CLI's
// settings.json.
type Settings struct {
	Hooks map[string][]HookGroup `json:"hooks"`
}

// HookGroup runs hooks for the tools whose name matcher (a regular
// expression) matches.
type HookGroup struct {
	Matcher string        `json:"matcher"`
	Hooks   []CommandHook `json:"hooks"`
}

// CommandHook is one "type": "command" hook.
type CommandHook struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	// Timeout is in the agent's unit: seconds for Codex, milliseconds
	// for Gemini CLI.
	Timeout int `json:"timeout"`
	// Env is added to the hook's environment (Gemini CLI).
	Env map[string]string `json:"env,omitempty"`
}

// HookTimeout is how long an agent should let the hook run for a
// question of timeout: tools.HookTimeoutMargin longer, so that the hook
// always answers (a deny when nobody did) before the agent gives up on it
// and runs the call.
func HookTimeout(question time.Duration) time.Duration {
	return question + tools.HookTimeoutMargin
}

// CodexSettings returns the hooks.json that runs command as Codex's
// PreToolUse hook for the tools matcher names, with a timeout in seconds
// above the question's.
func CodexSettings(command, matcher string, question time.Duration) *Settings {
	timeout := int(math.Ceil(HookTimeout(question).Seconds()))
	return &Settings{Hooks: map[string][]HookGroup{Codex.Event: {{Matcher: matcher, Hooks: []CommandHook{
		{Type: "command", Command: command, Timeout: timeout},
	}}}}}
}

// GeminiSettings returns the settings.json hooks that run command as
// Gemini CLI's BeforeTool hook for the tools matcher names, with a timeout
// in milliseconds above the question's, and HITL_URL and HITL_TOKEN set
// in the hook's environment from the CLI's (serverURL when HITL_URL is
// unset): on a GitHub Actions runner the CLI passes its hooks only a few
// variables of its own, and these would be lost.
func GeminiSettings(command, matcher, serverURL string, question time.Duration) *Settings {
	timeout := int(HookTimeout(question).Milliseconds())
	return &Settings{Hooks: map[string][]HookGroup{Gemini.Event: {{Matcher: matcher, Hooks: []CommandHook{{
		Type: "command", Command: command, Timeout: timeout,
		Env: map[string]string{"HITL_URL": "${HITL_URL:-" + serverURL + "}", "HITL_TOKEN": "${HITL_TOKEN:-}"},
	}}}}}}
}

// CopilotSettings is the part of Copilot CLI's settings.json
// ($COPILOT_HOME/settings.json) that runs hitl's command hook.
type CopilotSettings struct {
	Hooks map[string][]CopilotHook `json:"hooks"`
}

// CopilotHook is one of Copilot CLI's "type": "command" hooks.
type CopilotHook struct {
	Type string `json:"type"`
	// Bash is the command line, run by bash.
	Bash string `json:"bash"`
	// TimeoutSec is how long the CLI waits for the hook, in seconds.
	TimeoutSec int `json:"timeoutSec"`
	// Matcher is a regular expression that must match the whole tool
	// name; "" means every tool.
	Matcher string `json:"matcher,omitempty"`
}

// NewCopilotSettings returns the settings.json hooks that run command as
// Copilot CLI's preToolUse hook for the tools matcher names, with a
// timeout in seconds above the question's: the CLI runs the call when its
// hook outlives it.
func NewCopilotSettings(command, matcher string, question time.Duration) *CopilotSettings {
	timeout := int(math.Ceil(HookTimeout(question).Seconds()))
	return &CopilotSettings{Hooks: map[string][]CopilotHook{Copilot.Event: {
		{Type: "command", Bash: command, TimeoutSec: timeout, Matcher: matcher},
	}}}
}

// CheckCopilotMatcher fails when Copilot CLI would never match m, so that
// the hook would never run: a matcher with parentheses, or ending in $.
func CheckCopilotMatcher(m string) error {
	if strings.ContainsAny(m, "()") || strings.HasSuffix(m, "$") {
		return fmt.Errorf("a matcher with parentheses, or ending in $, matches no tool in Copilot CLI, which matches the whole tool name already: write %q, not %q", CopilotMatcher, "^("+CopilotMatcher+")$")
	}
	return nil
}

// CodexHome returns the directory Codex reads hooks.json and config.toml
// from: $CODEX_HOME, or ~/.codex.
func CodexHome() (string, error) {
	if h := os.Getenv("CODEX_HOME"); h != "" {
		return filepath.Abs(h)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find Codex's home: %w", err)
	}
	return filepath.Join(home, ".codex"), nil
}

// CodexTrust returns the config.toml tables that record every command
// hook of hooks (a hooks.json document, such as CodexSettings returns),
// read from the file hooksFile, as trusted:
// hooks.state."<CodexHookKey>".trusted_hash = "<CodexHookHash>". Codex
// runs a hook only once it is trusted, and skips an untrusted one without
// a word.
func CodexTrust(hooksFile string, hooks any) (string, error) {
	b, err := json.Marshal(hooks)
	if err != nil {
		return "", err
	}
	var doc struct {
		Hooks map[string][]struct {
			Matcher *string `json:"matcher"`
			Hooks   []struct {
				Type          string `json:"type"`
				Command       string `json:"command"`
				Timeout       int    `json:"timeout"`
				Async         bool   `json:"async"`
				StatusMessage string `json:"statusMessage"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return "", fmt.Errorf("read hooks: %w", err)
	}
	events := make([]string, 0, len(doc.Hooks))
	for event := range doc.Hooks {
		events = append(events, event)
	}
	sort.Strings(events)
	var s strings.Builder
	for _, event := range events {
		for g, group := range doc.Hooks[event] {
			for h, hook := range group.Hooks {
				key := CodexHookKey(hooksFile, event, g, h)
				if hook.Type != "command" || hook.Async || hook.StatusMessage != "" {
					return "", fmt.Errorf("hook %s: only synchronous command hooks without a statusMessage are hashed here", key)
				}
				fmt.Fprintf(&s, "[hooks.state.%s]\ntrusted_hash = %s\n\n",
					strconv.Quote(key), strconv.Quote(CodexHookHash(event, group.Matcher, hook.Command, hook.Timeout)))
			}
		}
	}
	return s.String(), nil
}

// CodexHookHash returns the hash Codex gives a command hook, the value to
// record as its trusted_hash, computed as Codex 0.169.0 does: the SHA-256
// of the compact JSON, keys sorted, of
//
//	{"event_name": "<event in snake case>", "matcher": "<matcher>",
//	 "hooks": [{"type": "command", "command": "<command>",
//	            "timeout": <seconds, 600 when unset>, "async": false}]}
//
// with "matcher" left out when matcher is nil (the group has none; an
// empty one is kept). A statusMessage, not handled here, would be hashed
// too. internal/codextest checks it against the hash Codex's app server
// reports: the normalization is Codex's own and may change.
func CodexHookHash(event string, matcher *string, command string, timeout int) string {
	if timeout <= 0 {
		timeout = 600
	}
	identity := map[string]any{
		"event_name": snakeCase(event),
		"hooks":      []any{map[string]any{"type": "command", "command": command, "timeout": timeout, "async": false}},
	}
	if matcher != nil {
		identity["matcher"] = *matcher
	}
	b, err := json.Marshal(identity) // maps marshal with sorted keys
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("sha256:%x", sha256.Sum256(b))
}

// CodexHookKey returns the key that names a hook in config.toml's
// hooks.state table: the absolute path of the file it is configured in,
// the event in snake case, the index of its matcher group and its index
// in the group.
func CodexHookKey(sourcePath, event string, group, handler int) string {
	return fmt.Sprintf("%s:%s:%d:%d", sourcePath, snakeCase(event), group, handler)
}

// snakeCase returns an event name such as PreToolUse as pre_tool_use.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// CursorSettings is Cursor's hooks.json (~/.cursor/hooks.json, or
// <project>/.cursor/hooks.json).
type CursorSettings struct {
	Version int                     `json:"version"`
	Hooks   map[string][]CursorHook `json:"hooks"`
}

// CursorHook is one of Cursor's command hooks.
type CursorHook struct {
	Command string `json:"command"`
	// Timeout is how long Cursor waits for the hook, in seconds. Cursor's
	// documentation as quoted by others shows it; what Cursor does when
	// a hook outlives it was not seen here.
	Timeout int `json:"timeout,omitempty"`
}

// NewCursorSettings returns the hooks.json that runs command for each of
// CursorEvents, with a timeout in seconds above the question's.
func NewCursorSettings(command string, question time.Duration) *CursorSettings {
	timeout := int(math.Ceil(HookTimeout(question).Seconds()))
	s := &CursorSettings{Version: 1, Hooks: map[string][]CursorHook{}}
	for _, event := range CursorEvents {
		s.Hooks[event] = []CursorHook{{Command: command, Timeout: timeout}}
	}
	return s
}
