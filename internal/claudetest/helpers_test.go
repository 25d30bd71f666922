package claudetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bashTurns is a conversation in which the model runs command with Bash
// (as tool call toolu_00), then answers "finished".
func bashTurns(command string) []Turn {
	return []Turn{ToolUse("Bash", map[string]any{"command": command, "description": "Write out.txt"}), Text("finished")}
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

// toolResult returns the tool_result of toolu_00 the model received, with
// the run's directory written $CWD, and whether it is an error.
func toolResult(t *testing.T, api *API, r *Output) (string, bool) {
	t.Helper()
	content, isError, ok := api.ToolResult("toolu_00")
	if !ok {
		t.Fatalf("no request holds the tool_result of toolu_00 (exit %d, stdout %s)", r.ExitCode, r.Stdout)
	}
	return strings.ReplaceAll(content, r.Dir, "$CWD"), isError
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

// object decodes raw, a JSON object.
func object(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return m
}

// checkResult checks that the run ended normally and that its
// permission_denials list toolu_00 exactly when denied.
func checkResult(t *testing.T, r *Output, denied bool) {
	t.Helper()
	if r.ExitCode != 0 || r.Result == nil || r.Result.IsError {
		t.Fatalf("run failed: exit %d, stdout %s", r.ExitCode, r.Stdout)
	}
	var ids []string
	for _, d := range r.Result.PermissionDenials {
		ids = append(ids, d.ToolUseID)
	}
	if got := len(ids) == 1 && ids[0] == "toolu_00"; got != denied || (!denied && len(ids) > 0) {
		t.Errorf("permission_denials name %v; want toolu_00 denied: %v", ids, denied)
	}
}
