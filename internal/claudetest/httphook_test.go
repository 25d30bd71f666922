package claudetest

import (
	"encoding/json"
	"net/http"
	"testing"
)

// The "type": "http" hook: the same input as a command hook, POSTed, with
// headers whose $VAR and ${VAR} are filled from allowedEnvVars only.

// hookHeaders are the headers of the HTTP hook under test, and the
// variables they may use.
var (
	hookHeaders = map[string]string{
		"Authorization": "Bearer $HOOK_TOKEN",
		"X-Braced":      "${HOOK_TOKEN}",
		"X-Not-Allowed": "$HOOK_SECRET",
		"X-Plain":       "plain",
	}
	hookEnv = []string{"HOOK_TOKEN=tok-123", "HOOK_SECRET=must-not-be-sent"}
)

func TestHTTPHookRequest(t *testing.T) {
	t.Parallel()
	api := NewAPI(t, bashTurns("echo hi > out.txt")...)
	hook := NewHTTPHook(t, HTTPHookReply{Body: fixture(t, "pretooluse-allow.json")})
	cfg := HTTPHookConfig(hook.URL+"/hook?agent=test", hookHeaders, []string{"HOOK_TOKEN"}, 0)
	r := Run(t, Options{API: api, Prompt: "write hi", Settings: Hooks("PreToolUse", "Bash", cfg), Env: hookEnv})
	checkResult(t, r, false)
	if out, _ := readOut(t, r); out != "hi\n" {
		t.Errorf("out.txt = %q; want the command's output (the hook allowed it)", out)
	}
	reqs := hook.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the hook got %d requests; want 1", len(reqs))
	}
	req := reqs[0]
	want := map[string]string{
		"Authorization": "Bearer tok-123", "X-Braced": "tok-123", "X-Not-Allowed": "", "X-Plain": "plain",
		"Content-Type": "application/json",
	}
	for k, v := range want {
		if got := req.Header.Get(k); got != v {
			t.Errorf("header %s = %q; want %q", k, got, v)
		}
	}
	if req.Method != http.MethodPost || req.Path != "/hook?agent=test" {
		t.Errorf("request %s %s; want POST /hook?agent=test", req.Method, req.Path)
	}
	in := object(t, req.Body)
	if in["hook_event_name"] != "PreToolUse" || in["tool_use_id"] != "toolu_00" || in["cwd"] != r.Dir {
		t.Errorf("body = %s; want the PreToolUse input", req.Body)
	}
	headers := map[string]string{}
	for _, k := range []string{"Authorization", "X-Braced", "X-Not-Allowed", "X-Plain", "Content-Type", "Accept", "User-Agent"} {
		headers[k] = req.Header.Get(k)
	}
	rec, _ := json.Marshal(map[string]any{"method": req.Method, "path": req.Path, "headers": headers, "body": req.Body})
	checkFixture(t, r, "http-hook-request.json", rec)
}

func TestHTTPHook(t *testing.T) {
	t.Parallel()
	refused := "http://" + refusedAddr(t) + "/hook"
	deny := fixture(t, "pretooluse-deny.json")
	const ran = "(Bash completed with no output)"
	cases := []struct {
		name  string
		reply HTTPHookReply
		url   string // "" means the endpoint's
		// wantOut is out.txt's content, "" for none; wantResult is the
		// tool_result the model gets.
		wantOut, wantResult string
	}{
		{name: "deny", reply: HTTPHookReply{Body: deny}, wantResult: "PreToolUse:Bash hook error: denied by the test: no writing here"},
		{name: "empty 200", reply: HTTPHookReply{}, wantOut: "hi\n", wantResult: ran},
		// Failures are ignored: the permission mode decides.
		{name: "500 with a deny body", reply: HTTPHookReply{Status: http.StatusInternalServerError, Body: deny}, wantOut: "hi\n", wantResult: ran},
		{name: "200 with bad JSON", reply: HTTPHookReply{Body: `{"hookSpecificOutput":`}, wantOut: "hi\n", wantResult: ran},
		{name: "connection refused", url: refused, wantOut: "hi\n", wantResult: ran},
		{name: "timeout", reply: HTTPHookReply{Hang: true}, wantOut: "hi\n", wantResult: ran},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, bashTurns("echo hi > out.txt")...)
			hook := NewHTTPHook(t, tc.reply)
			url := tc.url
			if url == "" {
				url = hook.URL + "/hook"
			}
			settings := Hooks("PreToolUse", "Bash", HTTPHookConfig(url, hookHeaders, []string{"HOOK_TOKEN"}, 1))
			r := Run(t, Options{API: api, Prompt: "write hi", Settings: settings, Env: hookEnv, Args: []string{"--permission-mode", "acceptEdits"}})
			checkResult(t, r, tc.wantOut == "")
			if n := len(hook.Requests()); n != 1 && tc.url == "" {
				t.Errorf("the hook got %d requests; want 1", n)
			}
			if out, _ := readOut(t, r); out != tc.wantOut {
				t.Errorf("out.txt = %q; want %q", out, tc.wantOut)
			}
			if result, isError := toolResult(t, api, r); result != tc.wantResult || isError != (tc.wantOut == "") {
				t.Errorf("tool_result = %q (is_error %v)\nwant %q", result, isError, tc.wantResult)
			}
		})
	}
}
