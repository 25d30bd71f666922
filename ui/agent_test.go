package ui_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

// interaction is what the tests read of an interaction.
type interaction struct {
	ID     string `json:"interaction_id"`
	Status string `json:"status"`
	Result *struct {
		Value       json.RawMessage `json:"value"`
		RespondedBy string          `json:"responded_by"`
		Channel     string          `json:"channel"`
	} `json:"result"`
}

// call sends a JSON request and returns the status and body.
func (s *hitlServer) call(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return resp.StatusCode, data
}

// ask creates an interaction as an agent would and returns its id.
func (s *hitlServer) ask(t *testing.T, req map[string]any) string {
	t.Helper()
	if _, ok := req["source_agent"]; !ok {
		req["source_agent"] = "test-agent"
	}
	status, data := s.call(t, http.MethodPost, "/api/v1/interactions", req)
	if status != http.StatusCreated {
		t.Fatalf("ask: status %d, want 201; body %s", status, data)
	}
	var in interaction
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatalf("ask: decode %s: %v", data, err)
	}
	return in.ID
}

// status returns an interaction's status, read by the agent.
func (s *hitlServer) status(t *testing.T, id string) hitl.Status {
	t.Helper()
	code, data := s.call(t, http.MethodGet, "/api/v1/interactions/"+id, nil)
	var in interaction
	if err := json.Unmarshal(data, &in); code != http.StatusOK || err != nil {
		t.Fatalf("get %s: status %d, %s", id, code, data)
	}
	return hitl.Status(in.Status)
}

// wait starts the agent's long-poll for id; the channel yields the
// interaction once it is no longer pending.
func (s *hitlServer) wait(t *testing.T, id string) <-chan interaction {
	t.Helper()
	ch := make(chan interaction, 1)
	errs := make(chan error, 1)
	go func() {
		for {
			req, err := http.NewRequest(http.MethodGet, s.URL+"/api/v1/interactions/"+id+"/wait?timeout=60", nil)
			if err != nil {
				errs <- err
				return
			}
			if s.token != "" {
				req.Header.Set("Authorization", "Bearer "+s.token)
			}
			resp, err := s.Client().Do(req)
			if err != nil {
				errs <- err
				return
			}
			var in interaction
			err = json.NewDecoder(resp.Body).Decode(&in)
			resp.Body.Close()
			if err != nil {
				errs <- err
				return
			}
			if in.Status != "pending" {
				ch <- in
				return
			}
		}
	}()
	out := make(chan interaction, 1)
	go func() {
		select {
		case in := <-ch:
			out <- in
		case err := <-errs:
			out <- interaction{Status: "error: " + err.Error()}
		}
	}()
	return out
}

// awaitResult reads the agent's result, failing after a while.
func awaitResult(t *testing.T, ch <-chan interaction) interaction {
	t.Helper()
	select {
	case in := <-ch:
		return in
	case <-time.After(30 * time.Second):
		t.Fatal("the agent's wait did not return within 30s")
		return interaction{}
	}
}
