package main

import (
	"encoding/json"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/chatfake"
	"github.com/hitl-sh/hitl/internal/claudetest"
	"github.com/hitl-sh/hitl/internal/codextest"
	"github.com/hitl-sh/hitl/internal/copilottest"
	"github.com/hitl-sh/hitl/internal/geminitest"
	"github.com/hitl-sh/hitl/internal/opencodetest"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestHookRuleAcrossAgents: "approve, and always allow `touch`, for every
// agent", answered to Claude Code, decides the same shell command from
// Codex, Gemini CLI, Copilot CLI and OpenCode (asked with the same token)
// without anyone; a chained command, which the rule does not cover, is still
// asked.
func TestHookRuleAcrossAgents(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := claudetest.NewAPI(t, bash("touch claude.txt")...)
	p := claudetest.Start(t, claudetest.Options{API: api, Prompt: "touch a file", Settings: commandHook(t, "PreToolUse"), Env: h.env()})
	h.answer(t, `{"decision": "approve", "always": {"scope": "all_agents", "match": {"arg": "command", "prefix": "touch"}}}`)
	r := p.Wait()
	checkRun(t, r)
	if _, ok := readFile(t, r, "claude.txt"); !ok {
		t.Fatal("claude.txt was not made")
	}
	const chained = "touch a.txt && touch b.txt"

	// Codex: the rule allows the first call; the second waits for alice,
	// who rejects it.
	capi := codextest.NewAPI(t, codextest.Exec("touch codex.txt"), codextest.Exec(chained), codextest.Text("finished"))
	done := printCodexHook(t).start(t, capi, h.env())
	asked := h.answer(t, `{"decision": "reject", "message": "one at a time"}`)
	cr := <-done
	if _, ok := agentFile(t, cr.Dir, "codex.txt"); !ok {
		t.Error("Codex: codex.txt was not made")
	}
	if _, ok := agentFile(t, cr.Dir, "a.txt"); ok {
		t.Error("Codex: a.txt was made; want the chained command asked, and rejected")
	}
	checkChainedAsked(t, h, "codex", asked, chained)

	// Gemini CLI: the same.
	gapi := geminitest.NewAPI(t, geminitest.Shell("touch gemini.txt"), geminitest.Shell(chained), geminitest.Text("finished"))
	gdone := startGemini(t, geminitest.Options{API: gapi, Prompt: "touch files", Settings: geminiHook(t), Env: h.env()})
	asked = h.answer(t, `{"decision": "reject", "message": "one at a time"}`)
	gr := <-gdone
	if _, ok := agentFile(t, gr.Dir, "gemini.txt"); !ok {
		t.Error("Gemini CLI: gemini.txt was not made")
	}
	if _, ok := agentFile(t, gr.Dir, "a.txt"); ok {
		t.Error("Gemini CLI: a.txt was made; want the chained command asked, and rejected")
	}
	checkChainedAsked(t, h, "gemini-cli", asked, chained)

	// Copilot CLI: the same.
	papi := copilottest.NewAPI(t, copilottest.Bash("touch copilot.txt"), copilottest.Bash(chained), chatfake.Text("finished"))
	pdone := startCopilot(t, copilottest.Options{API: papi, Prompt: "touch files", Settings: copilotHook(t), Env: h.env()})
	asked = h.answer(t, `{"decision": "reject", "message": "one at a time"}`)
	pr := <-pdone
	if _, ok := agentFile(t, pr.Dir, "copilot.txt"); !ok {
		t.Error("Copilot CLI: copilot.txt was not made")
	}
	if _, ok := agentFile(t, pr.Dir, "a.txt"); ok {
		t.Error("Copilot CLI: a.txt was made; want the chained command asked, and rejected")
	}
	checkChainedAsked(t, h, "copilot-cli", asked, chained)

	// OpenCode: the same.
	oapi := opencodetest.NewAPI(t, opencodetest.Bash("touch opencode.txt"), opencodetest.Bash(chained), chatfake.Text("finished"))
	odone := startOpenCode(t, opencodetest.Options{API: oapi, Prompt: "touch files", Plugins: openCodePlugin(t), Env: h.env()})
	asked = h.answer(t, `{"decision": "reject", "message": "one at a time"}`)
	or := <-odone
	if _, ok := agentFile(t, or.Dir, "opencode.txt"); !ok {
		t.Error("OpenCode: opencode.txt was not made")
	}
	if _, ok := agentFile(t, or.Dir, "a.txt"); ok {
		t.Error("OpenCode: a.txt was made; want the chained command asked, and rejected")
	}
	checkChainedAsked(t, h, "opencode", asked, chained)

	// Each agent's single touch was decided by the rule Claude Code's
	// answer made.
	var rule string
	for _, in := range h.interactions(t) {
		switch {
		case in.SourceAgent == "claude-code":
			continue
		case shellCommand(in) == chained:
			continue
		case in.Result == nil || in.Result.Channel != hitl.ChannelRule || in.Result.RuleID == "":
			t.Errorf("%s's %s: answered %+v, want by the rule", in.SourceAgent, in.Action.Input, in.Result)
		case rule != "" && in.Result.RuleID != rule:
			t.Errorf("%s: decided by rule %s, want %s", in.SourceAgent, in.Result.RuleID, rule)
		default:
			rule = in.Result.RuleID
		}
	}
	if rule == "" {
		t.Error("no call was decided by a rule")
	}
}

// checkChainedAsked checks that the question a person answered was the
// agent's chained command.
func checkChainedAsked(t *testing.T, h *claudeHitl, agent string, in *hitl.Interaction, chained string) {
	t.Helper()
	if in.SourceAgent != agent || in.Action.Kind != hitl.KindShell || shellCommand(in) != chained {
		t.Errorf("asked %s %s, want %s's %q", in.SourceAgent, in.Action.Input, agent, chained)
	}
}

// shellCommand returns the command of a shell action.
func shellCommand(in *hitl.Interaction) string {
	var input struct{ Command string }
	json.Unmarshal(in.Action.Input, &input)
	return input.Command
}
