package geminitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shellTurns is a conversation in which the model runs command with
// run_shell_command (call_00), then answers "finished".
func shellTurns(command string) []Turn { return []Turn{Shell(command), Text("finished")} }

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

// toolResponse returns what the model was told of call id: the function
// response's "error" when it has one (the call failed or was blocked),
// else its "output"; and whether it was an error.
func toolResponse(t *testing.T, api *API, r *Output, id string) (text string, isError bool) {
	t.Helper()
	resp, ok := api.FunctionResponse(id)
	if !ok {
		t.Fatalf("no request holds the function response of %s (exit %d, stdout %s)", id, r.ExitCode, r.Stdout)
	}
	if e, ok := resp["error"].(string); ok {
		return strings.ReplaceAll(e, r.Dir, "$CWD"), true
	}
	out, _ := resp["output"].(string)
	return strings.ReplaceAll(out, r.Dir, "$CWD"), false
}

// checkExit checks that gemini -p ended normally with its JSON result.
func checkExit(t *testing.T, r *Output) {
	t.Helper()
	if r.ExitCode != 0 || r.Result == nil || r.Result.Error != nil {
		t.Fatalf("gemini exited %d; stdout %s", r.ExitCode, r.Stdout)
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
