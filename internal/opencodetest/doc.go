// Package opencodetest runs the real OpenCode (opencode run) against a
// scripted fake OpenAI-compatible model API on loopback (package
// chatfake), for tests only. Its own tests confirm, against the installed
// version (Version, installed by test.sh), what OpenCode gives a plugin's
// tool.execute.before and what it does with each thing the plugin does,
// and keep the payloads as fixtures; testdata/README.md writes them down.
//
// A test scripts the model's turns, writes a plugin and runs OpenCode:
//
//	api := opencodetest.NewAPI(t, opencodetest.Bash("echo hi > out.txt"), chatfake.Text("done"))
//	p := opencodetest.NewRecordingPlugin(t, opencodetest.PluginReply{Throw: "no"})
//	out := opencodetest.Run(t, opencodetest.Options{
//		API:     api,
//		Prompt:  "write hi",
//		Plugins: map[string]string{"rec.js": p.Source},
//	})
//	text, _ := api.ToolResult(chatfake.CallID(0)) // what the model was told
//
// Run skips the test when OpenCode is missing, unless
// HITL_TEST_REQUIRE_OPENCODE=1 (test.sh sets it).
package opencodetest
