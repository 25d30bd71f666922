package agenttest

import (
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
)

func TestCommandHook(t *testing.T) {
	t.Parallel()
	h := NewCommandHook(t, "Test", HookReply{Stdout: `{"ok":true}`, Stderr: "note", Exit: 2})
	for _, in := range []string{`{"n":1}`, `{"n":2}`} {
		cmd := exec.Command(h.Command)
		cmd.Stdin = strings.NewReader(in)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if got := cmd.ProcessState.ExitCode(); got != 2 {
			t.Errorf("exit %d (%v); want 2", got, err)
		}
		if stdout.String() != `{"ok":true}` || stderr.String() != "note" {
			t.Errorf("stdout %q, stderr %q; want {\"ok\":true} and note", stdout.String(), stderr.String())
		}
	}
	var got []string
	for _, in := range h.Inputs(t) {
		got = append(got, string(in))
	}
	if want := `{"n":1} {"n":2}`; strings.Join(got, " ") != want {
		t.Errorf("inputs %q; want %s", got, want)
	}
}

func TestDecision(t *testing.T) {
	t.Parallel()
	if got, want := Decision(map[string]string{"decision": "block"}), (HookReply{Stdout: `{"decision":"block"}`}); got != want {
		t.Errorf("Decision = %+v; want %+v", got, want)
	}
}

func TestRecorder(t *testing.T) {
	t.Parallel()
	var rec Recorder
	received := rec.Received(1)
	rec.Record(httptest.NewRequest("POST", "/v1/x?q=1", nil), []byte(`{}`), -1)
	rec.Note(httptest.NewRequest("GET", "/v1/models", nil))
	select {
	case <-received:
		t.Fatal("Received(1) closed by a request outside the conversation")
	default:
	}
	rec.Record(httptest.NewRequest("POST", "/v1/x", nil), []byte(`{"a":1}`), 0)
	select {
	case <-received:
	default:
		t.Fatal("Received(1) not closed after a conversation request")
	}
	reqs := rec.Requests()
	if len(reqs) != 2 || reqs[0].Path != "/v1/x?q=1" || reqs[0].Turn != -1 || reqs[1].Turn != 0 || string(reqs[1].Body) != `{"a":1}` {
		t.Errorf("Requests = %+v; want /v1/x?q=1 turn -1, then /v1/x turn 0", reqs)
	}
	if got := rec.Others(); len(got) != 1 || got[0] != "GET /v1/models" {
		t.Errorf("Others = %q; want [GET /v1/models]", got)
	}
}

func TestJSONLines(t *testing.T) {
	t.Parallel()
	got := JSONLines([]byte("{\"type\":\"a\"}\nnot json\n{\"type\":\"b\"}\n"))
	if len(got) != 2 || got[0]["type"] != "a" || got[1]["type"] != "b" {
		t.Errorf("JSONLines = %v; want the a and b objects", got)
	}
}
