package mcpgate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// Gated is one server of a gate configuration file: the upstream and
// what its gate does, where the file says (nil and zero: the defaults
// given at start).
type Gated struct {
	Upstream      Upstream
	Policy        *Policy    // nil: the default policy
	Elicit        ElicitMode // "": the default
	Timeout       time.Duration
	ElicitTimeout time.Duration
}

// fileServer is one entry of a configuration file's "mcpServers": the
// shape Claude Desktop, Cursor and Claude Code use for an MCP server,
// with the gate's own keys beside it.
type fileServer struct {
	// The upstream: a command (with args and env) or a URL (with
	// headers); type, when given, must agree.
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	// The gate.
	Review        []string `json:"review"`
	Pass          []string `json:"pass"`
	Elicit        string   `json:"elicit"`
	Timeout       string   `json:"timeout"`
	ElicitTimeout string   `json:"elicit_timeout"`
}

// LoadConfig reads a gate configuration file: a JSON object whose
// "mcpServers" maps each server's name to its command ("command", "args",
// "env") or URL ("url", "headers"), as MCP clients write them, and,
// optionally, its gate's "review" and "pass" tool-name globs, "elicit"
// (hitl, client or client-else-hitl), "timeout" and "elicit_timeout"
// (durations). Unknown keys are refused, so that a misspelt policy is
// not silently ignored. The servers come back sorted by name.
func LoadConfig(path string) ([]Gated, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gate configuration: %w", err)
	}
	var file struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("gate configuration %s: %w", path, err)
	}
	if len(file.MCPServers) == 0 {
		return nil, fmt.Errorf("gate configuration %s: no servers under \"mcpServers\"", path)
	}
	names := make([]string, 0, len(file.MCPServers))
	for name := range file.MCPServers {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([]Gated, 0, len(names))
	for _, name := range names {
		g, err := parseServer(name, file.MCPServers[name])
		if err != nil {
			return nil, fmt.Errorf("gate configuration %s: %w", path, err)
		}
		out = append(out, g)
	}
	return out, nil
}

// parseServer reads one server of the file.
func parseServer(name string, raw json.RawMessage) (Gated, error) {
	var s fileServer
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Gated{}, fmt.Errorf("server %s: %w", name, err)
	}
	if !validName().MatchString(name) {
		return Gated{}, fmt.Errorf("server name %q: use letters, digits, '.', '_' and '-' (at most 64)", name)
	}
	g := Gated{Upstream: Upstream{Name: name}}
	switch {
	case s.Command != "" && s.URL != "":
		return Gated{}, fmt.Errorf("server %s: give a command or a url, not both", name)
	case s.Command != "":
		if s.Type != "" && s.Type != "stdio" || len(s.Headers) > 0 {
			return Gated{}, fmt.Errorf("server %s: a command is a stdio server (no type %q, no headers)", name, s.Type)
		}
		g.Upstream.Command = append([]string{s.Command}, s.Args...)
		g.Upstream.Env = s.Env
	case s.URL != "":
		if s.Type != "" && s.Type != "http" && s.Type != "streamable-http" || len(s.Args) > 0 || len(s.Env) > 0 {
			return Gated{}, fmt.Errorf("server %s: a url is a Streamable HTTP server (no type %q, no args or env)", name, s.Type)
		}
		u, err := ParseUpstream(name + "=" + s.URL)
		if err != nil || u.URL == "" {
			return Gated{}, fmt.Errorf("server %s: %q is not an http or https URL", name, s.URL)
		}
		g.Upstream.URL, g.Upstream.Headers = s.URL, s.Headers
	default:
		return Gated{}, fmt.Errorf("server %s: give a command or a url", name)
	}
	for k := range g.Upstream.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return Gated{}, fmt.Errorf("server %s: environment variable name %q", name, k)
		}
	}
	if s.Review != nil || s.Pass != nil {
		g.Policy = &Policy{Review: s.Review, Pass: s.Pass}
		if err := g.Policy.Check(); err != nil {
			return Gated{}, fmt.Errorf("server %s: %w", name, err)
		}
	}
	if s.Elicit != "" {
		g.Elicit = ElicitMode(s.Elicit)
		if !g.Elicit.valid() {
			return Gated{}, fmt.Errorf("server %s: elicit must be hitl, client or client-else-hitl; got %q", name, s.Elicit)
		}
	}
	var err error
	if g.Timeout, err = duration(s.Timeout); err != nil {
		return Gated{}, fmt.Errorf("server %s: timeout: %w", name, err)
	}
	if g.ElicitTimeout, err = duration(s.ElicitTimeout); err != nil {
		return Gated{}, fmt.Errorf("server %s: elicit_timeout: %w", name, err)
	}
	return g, nil
}

// duration reads a positive duration; "" is zero (the default).
func duration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, errors.New("want a positive duration, such as 10m")
	}
	return d, nil
}
