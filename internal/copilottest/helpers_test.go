package copilottest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/internal/chatfake"
)

// bashTurns is a conversation in which the model runs command with bash
// (call_00), then answers "finished".
func bashTurns(command string) []chatfake.Turn {
	return []chatfake.Turn{Bash(command), chatfake.Text("finished")}
}

// readOut returns the content of out.txt in the run's directory, and
// whether it exists.
func readOut(t *testing.T, r *Output) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.Dir, "out.txt"))
	if os.IsNotExist(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

// toolResult returns what the model was told of call id, with the
// working directory as $CWD.
func toolResult(t *testing.T, api *chatfake.API, r *Output, id string) string {
	t.Helper()
	content, ok := api.ToolResult(id)
	if !ok {
		t.Fatalf("no request holds the tool result of %s (exit %d)\nstdout %s", id, r.ExitCode, r.Stdout)
	}
	return strings.ReplaceAll(content, r.Dir, "$CWD")
}

// checkExit checks that copilot -p ended normally with its result event.
func checkExit(t *testing.T, r *Output) {
	t.Helper()
	if r.ExitCode != 0 || r.SessionID() == "" {
		t.Fatalf("copilot exited %d; stdout %s", r.ExitCode, r.Stdout)
	}
}

// onlyInput returns the one input the hook was given, failing the test if
// it ran another number of times.
func onlyInput(t *testing.T, h *CommandHook) map[string]any {
	t.Helper()
	inputs := h.Inputs(t)
	if len(inputs) != 1 {
		t.Fatalf("the hook ran %d times; want 1", len(inputs))
	}
	return object(t, inputs[0])
}

// object decodes raw, a JSON object.
func object(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return m
}

// fixture returns testdata/name.
func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// joinJSON joins raw JSON values with commas.
func joinJSON(values []json.RawMessage) string {
	var parts []string
	for _, v := range values {
		parts = append(parts, string(v))
	}
	return strings.Join(parts, ",")
}
