package opencodetest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// PluginReply is what a RecordingPlugin's tool.execute.before does once
// it has recorded its input.
type PluginReply struct {
	// Throw, if not "", is the message of the Error it throws.
	Throw string
	// Args, if not nil, replaces the call's arguments: when Assign, by
	// assigning output.args a new object; else by changing the object's
	// keys in place.
	Args   map[string]any
	Assign bool
}

// RecordingPlugin is an OpenCode plugin whose tool.execute.before records
// its input and output ({"input": {tool, sessionID, callID}, "output":
// {args}}) and answers as its PluginReply says.
type RecordingPlugin struct {
	// Source is the plugin's JavaScript: put it in Options.Plugins.
	Source string
	dir    string
}

// NewRecordingPlugin writes nothing yet: it makes a directory of the
// test's for the plugin's records.
func NewRecordingPlugin(t testing.TB, reply PluginReply) *RecordingPlugin {
	t.Helper()
	dir := t.TempDir()
	var act string
	switch {
	case reply.Args != nil && reply.Assign:
		b, _ := json.Marshal(reply.Args)
		act = fmt.Sprintf("output.args = %s;", b)
	case reply.Args != nil:
		b, _ := json.Marshal(reply.Args)
		act = fmt.Sprintf("for (const k of Object.keys(output.args)) delete output.args[k]; Object.assign(output.args, %s);", b)
	}
	if reply.Throw != "" {
		act += fmt.Sprintf(" throw new Error(%s);", jsString(reply.Throw))
	}
	src := fmt.Sprintf(`// An OpenCode plugin for tests: records each tool call, then answers.
import { writeFileSync, renameSync } from "node:fs";
let n = 0;
export const Recording = async () => ({
  "tool.execute.before": async (input, output) => {
    const f = %s + "/" + String(Date.now()).padStart(15, "0") + "-" + String(n++).padStart(4, "0") + ".json";
    writeFileSync(f + ".tmp", JSON.stringify({ input, output }));
    renameSync(f + ".tmp", f);
    %s
  },
});
`, jsString(dir), act)
	return &RecordingPlugin{Source: src, dir: dir}
}

// Inputs returns what the plugin was given, in the order of the calls.
func (p *RecordingPlugin) Inputs(t testing.TB) []json.RawMessage {
	t.Helper()
	entries, err := os.ReadDir(p.dir)
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
		b, err := os.ReadFile(filepath.Join(p.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, b)
	}
	return inputs
}
