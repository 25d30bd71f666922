package codextest

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// HookHash returns the hash Codex gives a command hook, the value to
// record as its trusted_hash, computed as Codex 0.169.0 does: the SHA-256
// of the compact JSON, keys sorted, of
//
//	{"event_name": "<event in snake case>", "matcher": "<matcher>",
//	 "hooks": [{"type": "command", "command": "<command>",
//	            "timeout": <seconds, 600 when unset>, "async": false}]}
//
// with "matcher" left out when matcher is nil (the group has none; an
// empty one is kept). (Codex normalizes the handler
// this way, passes it through TOML and canonical JSON; a statusMessage,
// not handled here, would be hashed too.) TestHookHash checks it against
// the hash Codex's app server reports.
func HookHash(event string, matcher *string, command string, timeout int) string {
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

// HookKey returns the key that names a hook in config.toml's hooks.state
// table: the absolute path of the file it is configured in, the event in
// snake case, the index of its matcher group and its index in the group.
func HookKey(sourcePath, event string, group, handler int) string {
	return fmt.Sprintf("%s:%s:%d:%d", sourcePath, snakeCase(event), group, handler)
}

// TrustedHashConfig returns the config.toml tables that trust every
// command hook of hooks, a hooks.json document (as Hooks returns), read
// from hooksFile: hooks.state."<key>".trusted_hash = "<hash>", computed
// with HookKey and HookHash, without Codex.
func TrustedHashConfig(hooksFile string, hooks any) (string, error) {
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
	var s strings.Builder
	for event, groups := range doc.Hooks {
		for g, group := range groups {
			for h, hook := range group.Hooks {
				if hook.Type != "command" || hook.Async || hook.StatusMessage != "" {
					return "", fmt.Errorf("hook %s: only synchronous command hooks without a statusMessage are hashed here", HookKey(hooksFile, event, g, h))
				}
				fmt.Fprintf(&s, "[hooks.state.%s]\ntrusted_hash = %s\n\n",
					strconv.Quote(HookKey(hooksFile, event, g, h)), strconv.Quote(HookHash(event, group.Matcher, hook.Command, hook.Timeout)))
			}
		}
	}
	return s.String(), nil
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
