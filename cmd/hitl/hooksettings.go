package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hitl-sh/hitl/tools"
)

// defaultHookMatcher names the tools whose calls the printed settings
// send for review: those that run commands or change files.
const defaultHookMatcher = "Bash|Edit|Write|MultiEdit|NotebookEdit"

// hookPath is hitl's HTTP hook endpoint for Claude Code.
const hookPath = "/api/v1/hooks/claude-code"

// printHookSettings prints the Claude Code settings that run the hook as
// f describes it: the command hook, or (--http) the HTTP hook, with the
// hook's timeout above the question's by tools.HookTimeoutMargin. A
// server reached over plain HTTP beyond this machine gets a warning on
// stderr (see plainHTTPWarning).
func printHookSettings(w, stderr io.Writer, f *hookFlags) error {
	if msg := plainHTTPWarning(f.server); msg != "" {
		fmt.Fprintln(stderr, msg)
	}
	wait := f.timeout
	if f.deferAfter > 0 {
		wait = f.deferAfter // the hook answers defer by then
	}
	hook := hookEntry{Type: "command", Command: hookCommand(f), Timeout: hookTimeout(wait)}
	if f.http {
		hook = hookEntry{
			Type:           "http",
			URL:            hookURL(f),
			Headers:        map[string]string{"Authorization": "Bearer $HITL_TOKEN"},
			AllowedEnvVars: []string{"HITL_TOKEN"},
			Timeout:        hookTimeout(f.timeout),
		}
	}
	settings := hookSettings{Hooks: map[string][]hookMatcher{
		f.event: {{Matcher: f.matcher, Hooks: []hookEntry{hook}}},
	}}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(settings); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// hookSettings is the part of Claude Code's settings.json that configures
// hooks, in the order its documentation writes it.
type hookSettings struct {
	Hooks map[string][]hookMatcher `json:"hooks"`
}

// hookMatcher runs hooks for the tools a matcher names.
type hookMatcher struct {
	Matcher string      `json:"matcher"`
	Hooks   []hookEntry `json:"hooks"`
}

// hookEntry is one hook: a command, or an HTTP endpoint.
type hookEntry struct {
	Type           string            `json:"type"`
	Command        string            `json:"command,omitempty"`
	URL            string            `json:"url,omitempty"`
	Headers        map[string]string `json:"headers,omitempty"`
	AllowedEnvVars []string          `json:"allowedEnvVars,omitempty"`
	Timeout        int               `json:"timeout"`
}

// hookTimeout is the hook's timeout setting, in whole seconds, for a
// question of timeout.
func hookTimeout(timeout time.Duration) int {
	return int(math.Ceil((timeout + tools.HookTimeoutMargin).Seconds()))
}

// hookCommand is the command line of the command hook: the flags that
// change what it does, the timeout always.
func hookCommand(f *hookFlags) string {
	args := []string{"hitl", "hook", "claude-code", "--timeout", seconds(f.timeout)}
	if f.agent != tools.ClaudeCodeAgent {
		args = append(args, "--agent", shellWord(f.agent))
	}
	if f.onError != string(tools.OnErrorDeny) {
		args = append(args, "--on-error", f.onError)
	}
	if f.deferAfter > 0 {
		args = append(args, "--defer-after", seconds(f.deferAfter))
	}
	if f.serverSet {
		args = append(args, "--server", shellWord(f.server))
	}
	return strings.Join(args, " ")
}

// hookURL is the HTTP hook's URL on the server, with the options as query
// parameters.
func hookURL(f *hookFlags) string {
	q := url.Values{}
	q.Set("timeout", strconv.FormatFloat(f.timeout.Seconds(), 'f', -1, 64))
	if f.agent != tools.ClaudeCodeAgent {
		q.Set("agent", f.agent)
	}
	if f.onError != string(tools.OnErrorDeny) {
		q.Set("on_error", f.onError)
	}
	return strings.TrimRight(f.server, "/") + hookPath + "?" + q.Encode()
}

// plainHTTPWarning returns a warning when server is an http:// URL of a
// host that is not loopback: the agent token and every reviewed call's
// input would cross the network in clear text, and anyone on the path
// could change the decision. The URL is printed as given rather than
// rewritten to https: hitl serve itself speaks plain HTTP, so an https
// URL it does not answer would make every HTTP hook fail, and Claude Code
// runs the call when an HTTP hook fails.
func plainHTTPWarning(server string) string {
	u, err := url.Parse(server)
	if err != nil || !strings.EqualFold(u.Scheme, "http") || isLoopbackHost(u.Hostname()) {
		return ""
	}
	return fmt.Sprintf("hitl hook claude-code: warning: %s is plain HTTP to another machine: the token and every reviewed call, and the decision, would cross the network in clear text. "+
		"Serve hitl behind TLS (a reverse proxy) and use its https:// URL.", server)
}

// isLoopbackHost reports whether host names this machine: localhost (or a
// name under .localhost) or a loopback address.
func isLoopbackHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// seconds formats d for --timeout: "540s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// shellWord quotes s for sh when it holds anything but plain characters.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:/@=+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
