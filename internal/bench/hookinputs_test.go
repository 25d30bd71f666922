package bench

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/hitl-sh/hitl/agents"
	"github.com/hitl-sh/hitl/tools"
)

// TestHookInputsAskForTheBenchCommand checks that every dialect's input
// reads, in hitl's own adapters, as the shell call the bench rule allows.
func TestHookInputsAskForTheBenchCommand(t *testing.T) {
	for _, d := range HookDialects() {
		data := hookInput(d, 7, benchCommand)
		var call tools.ToolCall
		if d == "claude-code" {
			in, err := tools.ParseHookInput(data)
			if err != nil {
				t.Fatalf("%s: %v", d, err)
			}
			call = in.ToolCall()
			if call.Tool != "Bash" {
				t.Errorf("%s: tool %q, want Bash", d, call.Tool)
			}
			call.KindInput = call.Input
		} else {
			a, ok := agents.Lookup(d)
			if !ok {
				t.Fatalf("%s: no such agent", d)
			}
			var err error
			if call, err = a.ToolCall(data); err != nil {
				t.Fatalf("%s: %v", d, err)
			}
			if call.Kind != "shell" {
				t.Errorf("%s: kind %q, want shell", d, call.Kind)
			}
		}
		var in struct{ Command string }
		if err := json.Unmarshal(call.KindInput, &in); err != nil || in.Command != benchCommand {
			t.Errorf("%s: command %q (%v), want %q", d, in.Command, err, benchCommand)
		}
		if !bytes.Contains(data, []byte(benchCommand)) {
			t.Errorf("%s: the input does not name %q, which the calls to a person replace", d, benchCommand)
		}
	}
}

// TestHookDecisionReadsEveryDialect checks that the benchmark tells an
// allow from a deny in every dialect's output.
func TestHookDecisionReadsEveryDialect(t *testing.T) {
	verdicts := map[string]*tools.Verdict{
		"allow": {Allow: true, Reason: "a rule allows it"},
		"deny":  {Reason: "rejected by alice"},
	}
	for want, v := range verdicts {
		for _, d := range HookDialects() {
			var out []byte
			if d == "claude-code" {
				out = tools.HookOutput(tools.HookPreToolUse, v, tools.OnErrorDeny)
			} else {
				a, _ := agents.Lookup(d)
				out = a.Output(v, tools.OnErrorDeny)
			}
			got, err := hookDecision(out)
			if err != nil || got != want {
				t.Errorf("%s: %s read as %q (%v), want %q", d, out, got, err, want)
			}
		}
	}
	if _, err := hookDecision([]byte(`{"continue":true}`)); err == nil {
		t.Error("an output with no decision read as one")
	}
}
