package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/server"
)

// doWithChannel sends a JSON request carrying the X-Hitl-Channel header
// (none when channel is "") and returns the status and body.
func (ts *testServer) doWithChannel(t *testing.T, method, path, channel, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, bytes.NewBufferString(body))
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if channel != "" {
		req.Header.Set(server.ChannelHeader, channel)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp.StatusCode, data
}

func TestChannelHeaderRecordsCreationChannel(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	tests := []struct {
		header string
		want   string
	}{
		{"", hitl.ChannelAPI},
		{hitl.ChannelCLI, hitl.ChannelCLI},
		{hitl.ChannelMCP, hitl.ChannelMCP},
	}
	for _, tt := range tests {
		status, data := ts.doWithChannel(t, http.MethodPost, "/api/v1/interactions", tt.header, `{"question":"via `+tt.header+`?"}`)
		if status != http.StatusCreated {
			t.Fatalf("header %q: status %d, want 201; body %s", tt.header, status, data)
		}
		var in hitl.Interaction
		if err := json.Unmarshal(data, &in); err != nil {
			t.Fatalf("decode: %v", err)
		}
		if got := in.CreatedVia; got != tt.want {
			t.Errorf("header %q: created_via = %q, want %q", tt.header, got, tt.want)
		}
	}
}

func TestChannelHeaderAppliesToAnswersAndCancels(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	var a, c hitl.Interaction
	ts.mustDo(t, http.MethodPost, "/api/v1/interactions", map[string]any{"question": "answer me"}, http.StatusCreated, &a)
	ts.mustDo(t, http.MethodPost, "/api/v1/interactions", map[string]any{"question": "cancel me"}, http.StatusCreated, &c)

	status, data := ts.doWithChannel(t, http.MethodPost, "/api/v1/interactions/"+a.ID+"/respond", hitl.ChannelMCP, `{"value":"ok"}`)
	if status != http.StatusOK {
		t.Fatalf("respond: status %d; body %s", status, data)
	}
	if err := json.Unmarshal(data, &a); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if got, want := a.Result.Channel, hitl.ChannelMCP; got != want {
		t.Errorf("answer channel = %q, want %q", got, want)
	}

	status, data = ts.doWithChannel(t, http.MethodPost, "/api/v1/interactions/"+c.ID+"/cancel", hitl.ChannelCLI, `{}`)
	if status != http.StatusOK {
		t.Fatalf("cancel: status %d; body %s", status, data)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if got, want := c.Result.Channel, hitl.ChannelCLI; got != want {
		t.Errorf("cancel channel = %q, want %q", got, want)
	}
}

func TestChannelHeaderRefusesOtherChannels(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	for _, ch := range []string{hitl.ChannelWeb, hitl.ChannelSlack, hitl.ChannelTimeout, hitl.ChannelAPI, "MCP", "bogus"} {
		status, data := ts.doWithChannel(t, http.MethodPost, "/api/v1/interactions", ch, `{"question":"sneaky?"}`)
		if status != http.StatusBadRequest {
			t.Errorf("header %q: status %d, want 400; body %s", ch, status, data)
			continue
		}
		if !strings.Contains(string(data), server.ChannelHeader) {
			t.Errorf("header %q: body %s should name the header", ch, data)
		}
	}
	var list struct {
		Interactions []hitl.Interaction `json:"interactions"`
	}
	ts.mustDo(t, http.MethodGet, "/api/v1/interactions", nil, http.StatusOK, &list)
	if got := len(list.Interactions); got != 0 {
		t.Errorf("%d interactions created by refused requests, want 0", got)
	}
}
