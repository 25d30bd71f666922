package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/tools"
)

// runHitl runs the hitl command line in-process.
func runHitl(args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestToolsCommand(t *testing.T) {
	turns.Parallel(t)
	tests := []struct {
		args   []string
		format tools.Format
		names  []string
	}{
		{[]string{"tools"}, tools.FormatOpenAI, []string{tools.AskHumanName, tools.HandoffName, tools.HumanFeedbackName}},
		{[]string{"tools", "--format", "openai"}, tools.FormatOpenAI, []string{tools.AskHumanName, tools.HandoffName, tools.HumanFeedbackName}},
		{[]string{"tools", "--format", "anthropic"}, tools.FormatAnthropic, []string{tools.AskHumanName, tools.HandoffName, tools.HumanFeedbackName}},
		{[]string{"tools", "--format=MCP"}, tools.FormatMCP, []string{tools.AskHumanName, tools.HandoffName, tools.HumanFeedbackName}},
		{[]string{"tools", tools.HumanFeedbackName, "--format", "anthropic"}, tools.FormatAnthropic, []string{tools.HumanFeedbackName}},
	}
	for _, tt := range tests {
		stdout, stderr, code := runHitl(tt.args...)
		if code != 0 {
			t.Errorf("hitl %s: exit %d; stderr:\n%s", strings.Join(tt.args, " "), code, stderr)
			continue
		}
		var list []tools.Tool
		for _, n := range tt.names {
			tool, _ := tools.Lookup(n)
			list = append(list, tool)
		}
		want, err := tools.Marshal(tt.format, list)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if got := strings.TrimSuffix(stdout, "\n"); got != string(want) {
			t.Errorf("hitl %s printed:\n%s\nwant:\n%s", strings.Join(tt.args, " "), got, want)
		}
		if !json.Valid([]byte(stdout)) {
			t.Errorf("hitl %s: output is not JSON", strings.Join(tt.args, " "))
		}
	}
}

func TestToolsCommandErrors(t *testing.T) {
	turns.Parallel(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"tools", "--format", "gemini"}, `unknown tool format "gemini"`},
		{[]string{"tools", "delete_everything"}, `unknown tool "delete_everything"`},
		{[]string{"tools", "--bogus"}, "flag provided but not defined"},
	} {
		stdout, stderr, code := runHitl(tt.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tt.want) {
			t.Errorf("hitl %s: exit %d stdout %q stderr %q; want 2, nothing, %q", strings.Join(tt.args, " "), code, stdout, stderr, tt.want)
		}
	}
}
