// Package copilottest runs the real GitHub Copilot CLI (copilot -p),
// offline, against a scripted fake OpenAI-compatible model API on loopback
// (package chatfake), for tests only. Its own tests confirm, against the
// installed version (Version, installed by test.sh), what Copilot CLI
// sends to its preToolUse hooks and what it does with each hook answer,
// and keep the payloads as fixtures; testdata/README.md writes them down.
//
// A test scripts the model's turns, configures Copilot CLI and runs it:
//
//	api := copilottest.NewAPI(t, copilottest.Bash("echo hi > out.txt"), chatfake.Text("done"))
//	hook := copilottest.NewCommandHook(t, copilottest.HookReply{Stdout: `{}`})
//	out := copilottest.Run(t, copilottest.Options{
//		API:      api,
//		Prompt:   "write hi",
//		Settings: copilottest.Hooks("preToolUse", "", hook.Hook(30)),
//	})
//	text, _ := api.ToolResult(chatfake.CallID(0)) // what the model was told
//
// Run skips the test when the CLI is missing, unless
// HITL_TEST_REQUIRE_COPILOT=1 (test.sh sets it).
package copilottest
