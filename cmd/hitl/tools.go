package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/hitl-sh/hitl/tools"
)

// runTools prints the tool definitions in a provider's format.
// Exit codes: 0, or 2 for bad flags and unknown formats or tools.
func runTools(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("tools", "hitl tools [--format openai|anthropic|mcp] [tool ...]",
		"Prints ready-to-use JSON definitions of hitl's agent tools, ask_human,\n"+
			"handoff_to_human and human_feedback (or only the tools named), for an agent that calls a model\n"+
			"directly: pass them as the model's tools, and forward the calls it makes to\n"+
			"hitl (in Go: tools.Call). openai is the Chat Completions function format,\n"+
			"anthropic the Messages API format, mcp the MCP tools/list format.", stderr)
	format := fs.String("format", string(tools.FormatOpenAI), "`format`: openai, anthropic or mcp")
	if code, ok := parse(fs, args, 2); !ok {
		return code
	}
	list := tools.All()
	if fs.NArg() > 0 {
		list = nil
		for _, name := range fs.Args() {
			t, ok := tools.Lookup(name)
			if !ok {
				fmt.Fprintf(stderr, "hitl tools: unknown tool %q: choose from %s, %s, %s\n", name, tools.AskHumanName, tools.HandoffName, tools.HumanFeedbackName)
				return 2
			}
			list = append(list, t)
		}
	}
	data, err := tools.Marshal(tools.Format(strings.ToLower(*format)), list)
	if err != nil {
		fmt.Fprintf(stderr, "hitl tools: %v\n", err)
		return 2
	}
	fmt.Fprintln(stdout, string(data))
	return 0
}
