package codextest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/hitl-sh/hitl/internal/agenttest"
)

// HookEntry is one configured hook as Codex's app server lists it
// (hooks/list), with its trust.
type HookEntry struct {
	// Key names the hook in config.toml's hooks.state table:
	// "<source file>:<event>:<group index>:<handler index>", such as
	// "/home/u/.codex/hooks.json:pre_tool_use:0:0".
	Key string `json:"key"`
	// EventName is the event in camel case, such as "preToolUse".
	EventName string `json:"eventName"`
	// Command is the hook's command line.
	Command string `json:"command"`
	// Matcher is the group's matcher.
	Matcher *string `json:"matcher"`
	// TimeoutSec is the timeout Codex applies, in seconds.
	TimeoutSec int `json:"timeoutSec"`
	// SourcePath is the file the hook is configured in.
	SourcePath string `json:"sourcePath"`
	// Source is where that file sits: "user", "project", …
	Source string `json:"source"`
	// Enabled is false for a hook turned off in hooks.state.
	Enabled bool `json:"enabled"`
	// CurrentHash is the hook's hash, "sha256:…"; trusting the hook is
	// recording it as the hook's trusted_hash.
	CurrentHash string `json:"currentHash"`
	// TrustStatus is "untrusted", "trusted", "modified" or "managed".
	TrustStatus string `json:"trustStatus"`
}

// ListHooks asks Codex's app server (codex app-server, over stdio) for the
// hooks configured for working directory dir under the environment env
// (Env: HOME and CODEX_HOME).
func ListHooks(t testing.TB, dir string, env []string) []HookEntry {
	t.Helper()
	var hooks []HookEntry
	appServer(t, env, func(call func(method string, params, result any)) {
		hooks = listHooks(call, dir)
	})
	return hooks
}

// TrustHooks records every hook configured for dir as trusted, as
// accepting it in Codex's UI does: through the app server, hooks/list
// gives each hook's key and currentHash, and config/batchWrite sets
// hooks.state."<key>".trusted_hash in $CODEX_HOME/config.toml. It returns
// the hooks as listed afterwards, and fails the test unless all are
// trusted.
func TrustHooks(t testing.TB, home, dir string, env []string) []HookEntry {
	t.Helper()
	var hooks []HookEntry
	appServer(t, env, func(call func(method string, params, result any)) {
		var edits []any
		for _, h := range listHooks(call, dir) {
			if h.TrustStatus != "trusted" && h.TrustStatus != "managed" {
				edits = append(edits, map[string]any{
					"keyPath":       "hooks.state." + strconv.Quote(h.Key) + ".trusted_hash",
					"mergeStrategy": "upsert",
					"value":         h.CurrentHash,
				})
			}
		}
		if len(edits) > 0 {
			call("config/batchWrite", map[string]any{"edits": edits}, nil)
		}
		hooks = listHooks(call, dir)
	})
	for _, h := range hooks {
		if h.TrustStatus != "trusted" && h.TrustStatus != "managed" {
			t.Fatalf("hook %s is %s after trusting it", h.Key, h.TrustStatus)
		}
	}
	return hooks
}

func listHooks(call func(method string, params, result any), dir string) []HookEntry {
	var res struct {
		Data []struct {
			Hooks    []HookEntry `json:"hooks"`
			Warnings []string    `json:"warnings"`
			Errors   []any       `json:"errors"`
		} `json:"data"`
	}
	call("hooks/list", map[string]any{"cwds": []string{dir}}, &res)
	var hooks []HookEntry
	for _, d := range res.Data {
		hooks = append(hooks, d.Hooks...)
	}
	return hooks
}

// appServer starts codex app-server over stdio, initializes it, runs f
// with a function that makes one JSON-RPC call (failing the test on an
// error), and stops the server.
func appServer(t testing.TB, env []string, f func(call func(method string, params, result any))) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, RequireBinary(t), "app-server")
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	agenttest.KillGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start codex app-server: %v", err)
	}
	lines := bufio.NewReader(stdout)
	defer func() {
		// The server exits at the end of its input; its output is read to
		// the end before Wait closes it.
		stdin.Close()
		io.Copy(io.Discard, lines)
		cmd.Wait()
		agenttest.ReapGroup(cmd)
	}()
	id := 0
	send := func(msg map[string]any) {
		t.Helper()
		msg["jsonrpc"] = "2.0"
		b, _ := json.Marshal(msg)
		if _, err := stdin.Write(append(b, '\n')); err != nil {
			t.Fatalf("write to codex app-server: %v", err)
		}
	}
	call := func(method string, params, result any) {
		t.Helper()
		id++
		send(map[string]any{"id": id, "method": method, "params": params})
		for {
			line, err := lines.ReadBytes('\n')
			if err != nil {
				t.Fatalf("codex app-server, %s: %v", method, err)
			}
			var msg struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(line, &msg) != nil || msg.ID == nil || msg.Method != "" || *msg.ID != id {
				continue // a notification or a request of the server's
			}
			if msg.Error != nil {
				t.Fatalf("codex app-server, %s: %s", method, msg.Error)
			}
			if result != nil {
				if err := json.Unmarshal(msg.Result, result); err != nil {
					t.Fatalf("codex app-server, %s: decode %s: %v", method, msg.Result, err)
				}
			}
			return
		}
	}
	call("initialize", map[string]any{"clientInfo": map[string]any{"name": "hitl-codextest", "version": Version}}, nil)
	send(map[string]any{"method": "initialized"})
	f(call)
}

// String returns the entry as its key and trust status, for messages.
func (h HookEntry) String() string { return fmt.Sprintf("%s (%s)", h.Key, h.TrustStatus) }
