// Package codextest runs the real OpenAI Codex CLI (codex exec) against a
// scripted fake OpenAI Responses API on loopback, for tests only. Its own
// tests confirm, against the installed version (Version, installed by
// test.sh), what Codex sends to its hooks and what it does with each hook
// answer, and keep the payloads as fixtures; testdata/README.md writes
// them down.
//
// A test scripts the model's turns, configures Codex and runs it:
//
//	api := codextest.NewAPI(t, codextest.Exec("echo hi > out.txt"), codextest.Text("done"))
//	hook := codextest.NewCommandHook(t, codextest.HookReply{Stdout: `{}`})
//	out := codextest.Run(t, codextest.Options{
//		API:    api,
//		Prompt: "write hi",
//		Hooks:  codextest.Hooks("PreToolUse", "Bash", hook.Hook(30)),
//	})
//	text, _ := api.ToolOutput(codextest.CallID(0)) // what the model was told
//
// Run skips the test when the binary is missing, unless
// HITL_TEST_REQUIRE_CODEX=1 (test.sh sets it). Codex runs a hook only when
// it is trusted: Run passes --dangerously-bypass-hook-trust unless
// Options.Trust says otherwise; TrustHooks records the hooks' hashes
// through Codex's app server, and agents.CodexTrust computes them
// (agents.CodexHookHash) without Codex, as hitl hook codex does.
package codextest
