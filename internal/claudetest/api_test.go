package claudetest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestMessagesAPI: what the CLI sends to the Messages API in a run with one
// tool call, and that the fake's script and records line up.
func TestMessagesAPI(t *testing.T) {
	t.Parallel()
	api := NewAPI(t, ToolUse("Bash", map[string]any{"command": "echo hi", "description": "Say hi"}), Text("finished"))
	r := Run(t, Options{API: api, Prompt: "say hi", Args: []string{"--allowedTools", "Bash(echo hi)"}})
	checkResult(t, r, false)
	if r.Result.Result != "finished" || r.Result.NumTurns != 2 {
		t.Errorf("result %q after %d turns; want \"finished\" after 2", r.Result.Result, r.Result.NumTurns)
	}
	if result, isError := toolResult(t, api, r); result != "hi" || isError {
		t.Errorf("tool_result = %q (is_error %v); want the command's output", result, isError)
	}
	reqs := api.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests to /v1/messages; want 2", len(reqs))
	}
	for i, req := range reqs {
		var body struct {
			Model  string `json:"model"`
			Stream bool   `json:"stream"`
		}
		json.Unmarshal(req.Body, &body)
		if req.Path != "/v1/messages?beta=true" || !body.Stream || req.Turn != i {
			t.Errorf("request %d: %s, stream %v, turn %d; want /v1/messages?beta=true, streamed, turn %d", i, req.Path, body.Stream, req.Turn, i)
		}
		if got := req.Header.Get("X-Api-Key"); got != "test" {
			t.Errorf("request %d: x-api-key %q; want test", i, got)
		}
	}
	for _, o := range api.Others() {
		if o != "HEAD /" {
			t.Errorf("the CLI also sent %s", o)
		}
	}
}

// TestFakeAPI checks the fake's answers without the CLI: the turn follows
// the assistant messages already in the request, a request without tools
// is outside the script, and a non-streaming request gets a whole message.
func TestFakeAPI(t *testing.T) {
	t.Parallel()
	api := NewAPI(t, ToolUse("Bash", map[string]any{"command": "ls"}), Text("bye"))
	post := func(body string) string {
		t.Helper()
		resp, err := http.Post(api.URL+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	tools := `"tools": [{"name": "Bash"}]`
	first := post(`{"model": "m", "stream": true, ` + tools + `, "messages": [{"role": "user", "content": "hi"}]}`)
	for _, want := range []string{"event: message_start", `"id":"toolu_00"`, `"name":"Bash"`, `"partial_json"`, `"stop_reason":"tool_use"`, "event: message_stop"} {
		if !strings.Contains(first, want) {
			t.Errorf("first turn lacks %s:\n%s", want, first)
		}
	}
	second := post(`{"model": "m", ` + tools + `, "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": []}, {"role": "user", "content": "more"}]}`)
	var msg struct {
		Model      string `json:"model"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(second), &msg); err != nil || msg.Model != "m" || msg.StopReason != "end_turn" || len(msg.Content) != 1 || msg.Content[0].Text != "bye" {
		t.Errorf("second turn = %s; want the text \"bye\" as a whole message from model m", second)
	}
	aside := post(`{"model": "m", "messages": [{"role": "user", "content": "a title please"}]}`)
	if !bytes.Contains([]byte(aside), []byte(`"ok"`)) {
		t.Errorf("a request without tools got %s; want a short text outside the script", aside)
	}
	if got := []int{api.Requests()[0].Turn, api.Requests()[1].Turn, api.Requests()[2].Turn}; got[0] != 0 || got[1] != 1 || got[2] != -1 {
		t.Errorf("turns %v; want [0 1 -1]", got)
	}
}
