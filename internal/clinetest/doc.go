// Package clinetest runs the real Cline CLI (cline, from the npm registry)
// headless, against a scripted fake OpenAI-compatible model API on
// loopback (package chatfake), for tests only.
//
// A test scripts the model's turns, gives Cline a PreToolUse hook file and
// runs it:
//
//	api := clinetest.NewAPI(t, clinetest.RunCommand("echo hi > out.txt"), chatfake.Text("done"))
//	out := clinetest.Run(t, clinetest.Options{API: api, Prompt: "write hi", Hook: script})
//
// Run skips the test when the CLI is missing, unless
// HITL_TEST_REQUIRE_CLINE=1 (test.sh sets it).
package clinetest
