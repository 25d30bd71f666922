package codextest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// execTurns is a conversation in which the model runs cmd with
// exec_command (call_00), then answers "finished".
func execTurns(cmd string) []Turn { return []Turn{Exec(cmd), Text("finished")} }

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

// toolOutput returns the output of call_00 the model received, with the
// run's directory written $CWD.
func toolOutput(t *testing.T, api *API, r *Output) string {
	t.Helper()
	out, ok := api.ToolOutput(CallID(0))
	if !ok {
		t.Fatalf("no request holds the output of %s (exit %d, stdout %s)", CallID(0), r.ExitCode, r.Stdout)
	}
	return strings.ReplaceAll(out, r.Dir, "$CWD")
}

// checkExit checks that codex exec ended normally.
func checkExit(t *testing.T, r *Output) {
	t.Helper()
	if r.ExitCode != 0 {
		t.Fatalf("codex exec exited %d; stdout %s", r.ExitCode, r.Stdout)
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

// readFile returns the content of the file at path.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
