// Package claudetest runs the real Claude Code CLI against a scripted fake
// Anthropic Messages API on loopback, for tests only. Its own tests confirm,
// against the installed version (Version, installed by test.sh), the shapes
// Claude Code sends to and accepts from hooks and permission-prompt tools,
// and keep them as fixtures; testdata/README.md writes them down.
//
// A test scripts the model's turns, configures Claude Code and runs it:
//
//	api := claudetest.NewAPI(t,
//		claudetest.ToolUse("Bash", map[string]any{"command": "echo hi > out.txt"}),
//		claudetest.Text("done"))
//	out := claudetest.Run(t, claudetest.Options{
//		API:      api,
//		Prompt:   "write hi",
//		Settings: claudetest.Hooks("PreToolUse", "Bash", claudetest.CommandHookConfig(hitl+" hook claude-code", 30)),
//	})
//	content, isError, _ := api.ToolResult("toolu_00") // what the model was told
//
// Run skips the test when the binary is missing, unless
// HITL_TEST_REQUIRE_CLAUDE=1 (test.sh sets it). The recording hooks
// (NewCommandHook, NewHTTPHook) and the MCP permission-prompt server
// (NewPermissionServer) stand in for hitl's side; a test binary that starts
// a PermissionServer over stdio calls Main first in its TestMain.
package claudetest
