// Package geminitest runs the real Gemini CLI (gemini -p) against a
// scripted fake Gemini API on loopback, for tests only. Its own tests
// confirm, against the installed version (Version, installed by test.sh),
// what Gemini CLI sends to its BeforeTool hooks and what it does with each
// hook answer, and keep the payloads as fixtures; testdata/README.md
// writes them down.
//
// A test scripts the model's turns, configures Gemini CLI and runs it:
//
//	api := geminitest.NewAPI(t, geminitest.Shell("echo hi > out.txt"), geminitest.Text("done"))
//	hook := geminitest.NewCommandHook(t, geminitest.HookReply{Stdout: `{}`})
//	out := geminitest.Run(t, geminitest.Options{
//		API:      api,
//		Prompt:   "write hi",
//		Settings: geminitest.Hooks("BeforeTool", "run_shell_command", hook.Hook(30000)),
//	})
//	text, _ := api.FunctionResponse(geminitest.CallID(0)) // what the model was told
//
// Run skips the test when the CLI is missing, unless
// HITL_TEST_REQUIRE_GEMINI=1 (test.sh sets it).
package geminitest
