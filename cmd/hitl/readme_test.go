package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/tools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// readmeSnippet returns the code block that follows "<!-- snippet: name -->"
// in the README or in one of the pages under docs/.
func readmeSnippet(t *testing.T, name string) string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob("../../docs/*/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range append(append([]string{"../../README.md"}, pages...), more...) {
		if snippet, ok := snippetIn(t, path, name); ok {
			return snippet
		}
	}
	t.Fatalf("neither the README nor docs/ has a snippet %q", name)
	return ""
}

// snippetIn returns the code block that follows "<!-- snippet: name -->"
// in the file at path, and whether there is one.
func snippetIn(t *testing.T, path, name string) (string, bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	var (
		lines          []string
		found, inBlock bool
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !found:
			found = line == "<!-- snippet: "+name+" -->"
		case !inBlock && strings.HasPrefix(line, "```"):
			inBlock = true
		case inBlock && line == "```":
			return strings.Join(lines, "\n"), true
		case inBlock:
			lines = append(lines, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return "", false
}

// listTools connects an MCP client over tr and checks it lists hitl's
// tools.
func listTools(t *testing.T, tr mcp.Transport) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "readme", Version: "1.0"}, nil)
	cs, err := c.Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	var got []string
	for _, tool := range res.Tools {
		got = append(got, tool.Name)
	}
	if want := []string{tools.AskHumanName, tools.HandoffName, tools.HumanFeedbackName, tools.PermissionPromptName}; !slices.Equal(got, want) {
		t.Errorf("tools %q, want %q", got, want)
	}
}

// checkMCPURL checks that u is the default server's /mcp and that the
// same path on srv serves the tools.
func checkMCPURL(t *testing.T, srv *hitlServer, u string) {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatalf("url %q: %v", u, err)
	}
	if got, want := parsed.Scheme+"://"+parsed.Host, defaultServerURL; got != want {
		t.Errorf("url %s: server %s, want the default %s", u, got, want)
	}
	if got, want := "http://"+parsed.Host, "http://"+defaultAddr; got != want {
		t.Errorf("url %s: host %s, want hitl serve's default address %s", u, got, want)
	}
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	listTools(t, &mcp.StreamableClientTransport{Endpoint: srv.URL + parsed.Path, HTTPClient: hc, MaxRetries: -1})
}

// hitlCommand returns the hitl binary run with args, as a config names it
// ("hitl"), pointed at srv.
func hitlCommand(t *testing.T, srv *hitlServer, command string, args []string, env map[string]string) *exec.Cmd {
	t.Helper()
	if command != "hitl" {
		t.Fatalf("command %q, want hitl", command)
	}
	if u, ok := env["HITL_URL"]; ok && u != defaultServerURL {
		t.Errorf("HITL_URL %q, want the default %s", u, defaultServerURL)
	}
	cmd := exec.Command(hitlBin, args...)
	cmd.Env = cleanEnv()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, "HITL_URL="+srv.URL) // the test's server, not the default port
	return cmd
}

func TestReadmeMCPSnippets(t *testing.T) {
	turns.Parallel(t)
	srv := startServer(t)

	t.Run("claude-code", func(t *testing.T) {
		lines := strings.Split(readmeSnippet(t, "claude-code"), "\n")
		if len(lines) != 2 {
			t.Fatalf("%d commands, want the HTTP and the stdio one", len(lines))
		}
		http := strings.Fields(lines[0])
		if want := []string{"claude", "mcp", "add", "--transport", "http", "hitl"}; len(http) != 7 || !slices.Equal(http[:6], want) {
			t.Fatalf("HTTP command %q, want %q and a URL", lines[0], want)
		}
		checkMCPURL(t, srv, http[6])

		stdio := strings.Fields(lines[1])
		i := slices.Index(stdio, "--")
		if i < 0 || !slices.Equal(stdio[:i], []string{"claude", "mcp", "add", "hitl"}) || i+1 >= len(stdio) {
			t.Fatalf("stdio command %q, want claude mcp add hitl -- <command>", lines[1])
		}
		listTools(t, &mcp.CommandTransport{Command: hitlCommand(t, srv, stdio[i+1], stdio[i+2:], nil)})
	})

	t.Run("claude-desktop", func(t *testing.T) {
		var config struct {
			MCPServers map[string]struct {
				Command string            `json:"command"`
				Args    []string          `json:"args"`
				Env     map[string]string `json:"env"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(readmeSnippet(t, "claude-desktop")), &config); err != nil {
			t.Fatalf("snippet is not valid JSON: %v", err)
		}
		s, ok := config.MCPServers["hitl"]
		if !ok || len(config.MCPServers) != 1 {
			t.Fatalf("mcpServers %v, want just hitl", config.MCPServers)
		}
		listTools(t, &mcp.CommandTransport{Command: hitlCommand(t, srv, s.Command, s.Args, s.Env)})
	})

	t.Run("cursor", func(t *testing.T) {
		var config struct {
			MCPServers map[string]struct {
				URL string `json:"url"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(readmeSnippet(t, "cursor")), &config); err != nil {
			t.Fatalf("snippet is not valid JSON: %v", err)
		}
		s, ok := config.MCPServers["hitl"]
		if !ok || len(config.MCPServers) != 1 {
			t.Fatalf("mcpServers %v, want just hitl", config.MCPServers)
		}
		checkMCPURL(t, srv, s.URL)
	})
}

func TestReadmeToolsSnippet(t *testing.T) {
	turns.Parallel(t)
	line, _, _ := strings.Cut(readmeSnippet(t, "tools"), "#")
	args := strings.Fields(line)
	if len(args) < 2 || args[0] != "hitl" {
		t.Fatalf("snippet %q, want a hitl command", line)
	}
	stdout, stderr, code := runHitl(args[1:]...)
	if code != 0 {
		t.Fatalf("%s: exit %d; stderr:\n%s", line, code, stderr)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(stdout), &list); err != nil || len(list) != 3 {
		t.Errorf("%s printed %d tools (%v), want 3 in JSON", line, len(list), err)
	}
}
