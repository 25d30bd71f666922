package agenttest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// HookReply is what a CommandHook does once it has recorded its input.
type HookReply struct {
	// Stdout is written to standard output: the hook's JSON answer.
	Stdout string
	// Stderr is written to standard error.
	Stderr string
	// Exit is the exit status.
	Exit int
	// Crash kills the hook with SIGKILL after it wrote its output.
	Crash bool
	// Hang makes the hook never exit (until the agent kills it).
	Hang bool
}

// Decision returns a reply that answers with v marshalled as JSON and
// exits 0.
func Decision(v any) HookReply {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return HookReply{Stdout: string(b)}
}

// CommandHook is a hook program for an agent's "type": "command" hooks: a
// shell script that records every input it is given on standard input and
// answers as its HookReply says.
type CommandHook struct {
	// Command is the command line to put in the agent's settings.
	Command string
	dir     string
}

// NewCommandHook writes a hook script for agent (such as "Codex", named
// in the script's comment) into a new directory of the test's.
func NewCommandHook(t testing.TB, agent string, reply HookReply) *CommandHook {
	t.Helper()
	dir := t.TempDir()
	WriteFile(t, filepath.Join(dir, "stdout"), []byte(reply.Stdout))
	WriteFile(t, filepath.Join(dir, "stderr"), []byte(reply.Stderr))
	Mkdir(t, filepath.Join(dir, "inputs"))
	var s strings.Builder
	fmt.Fprintf(&s, "#!/bin/sh\n# A %s hook for tests: records its input, then answers.\n", agent)
	fmt.Fprintf(&s, "d=%s\n", ShellQuote(dir))
	// One file per call, named so that a sort gives the order of calls;
	// renamed once complete so that a reader never sees half of one.
	s.WriteString("f=\"$d/inputs/$(date +%s%N)-$$.json\"\ncat >\"$f.tmp\" && mv \"$f.tmp\" \"$f\"\n")
	s.WriteString("cat \"$d/stdout\"\ncat \"$d/stderr\" >&2\n")
	if reply.Crash {
		s.WriteString("kill -KILL $$\n")
	}
	if reply.Hang {
		s.WriteString("exec sleep 600\n")
	}
	fmt.Fprintf(&s, "exit %d\n", reply.Exit)
	path := filepath.Join(dir, "hook.sh")
	WriteFile(t, path, []byte(s.String()))
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return &CommandHook{Command: path, dir: dir}
}

// Inputs returns the inputs the hook was given, in the order of the calls.
func (h *CommandHook) Inputs(t testing.TB) []json.RawMessage {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(h.dir, "inputs"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var inputs []json.RawMessage
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(h.dir, "inputs", name))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, b)
	}
	return inputs
}
