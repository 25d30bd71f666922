package claudetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/internal/agenttest"
)

// Model is the model the fake API lists; its replies name the model
// each request asked for.
const Model = "claude-sonnet-4-5"

// Turn is one reply of the scripted model: a tool call, or final text.
type Turn struct {
	// Tool is the tool to call; "" means the turn is Text.
	Tool string
	// Input is the tool call's input, marshalled to JSON.
	Input any
	// ID is the tool_use id; "" means toolu_<n> for the n-th turn.
	ID string
	// Text is the final answer when Tool is "".
	Text string

	// msgID is the id of the message that plays the turn, one per turn:
	// Claude Code merges consecutive assistant messages with the same id.
	msgID string
}

// ToolUse returns a turn in which the model calls tool with input.
func ToolUse(tool string, input any) Turn { return Turn{Tool: tool, Input: input} }

// Text returns a turn in which the model answers text and stops.
func Text(text string) Turn { return Turn{Text: text} }

// Request is one POST /v1/messages the fake API received.
type Request = agenttest.Request

// API is a scripted fake of the Anthropic Messages API. A request's place in
// the script is the number of assistant messages it already holds, so a
// retried request gets the same turn again.
type API struct {
	*httptest.Server

	t     testing.TB
	turns []Turn

	rec agenttest.Recorder
}

// NewAPI starts a fake Messages API that plays turns. It stops when the test
// ends. Past the end of the script it answers "done".
func NewAPI(t testing.TB, turns ...Turn) *API {
	t.Helper()
	a := &API{t: t, turns: turns}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.Close)
	return a
}

// Requests returns the POST /v1/messages requests received so far, in
// order.
func (a *API) Requests() []Request {
	return a.rec.Requests()
}

// Received returns a channel that is closed once n conversation requests
// (those that offer tools) have arrived.
func (a *API) Received(n int) <-chan struct{} {
	return a.rec.Received(n)
}

// Others returns the requests other than POST /v1/messages, in order, as
// "METHOD path".
func (a *API) Others() []string {
	return a.rec.Others()
}

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case (r.Method == http.MethodHead || r.Method == http.MethodGet) && r.URL.Path == "/":
		a.note(r, false) // the CLI's connectivity check
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		a.serveMessages(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		a.note(r, true)
		agenttest.WriteJSON(w, http.StatusOK, map[string]int{"input_tokens": 100})
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		a.note(r, true)
		agenttest.WriteJSON(w, http.StatusOK, map[string]any{
			"data":     []any{map[string]any{"type": "model", "id": Model, "display_name": "Claude Sonnet 4.5", "created_at": "2025-09-29T00:00:00Z"}},
			"has_more": false, "first_id": Model, "last_id": Model,
		})
	default:
		a.note(r, true)
		agenttest.WriteJSON(w, http.StatusNotFound, map[string]any{
			"type":  "error",
			"error": map[string]string{"type": "not_found_error", "message": "the fake Messages API has no " + r.URL.Path},
		})
	}
}

// note records a request other than POST /v1/messages, and logs it if the
// CLI was not expected to send it.
func (a *API) note(r *http.Request, unexpected bool) {
	a.rec.Note(r)
	if unexpected {
		a.t.Logf("fake Messages API: unexpected %s %s", r.Method, r.URL.RequestURI())
	}
}

// messagesRequest is the part of a Messages API request the fake reads.
type messagesRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role string `json:"role"`
	} `json:"messages"`
	Tools []json.RawMessage `json:"tools"`
}

func (a *API) serveMessages(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		agenttest.WriteJSON(w, http.StatusBadRequest, map[string]any{
			"type": "error", "error": map[string]string{"type": "invalid_request_error", "message": err.Error()},
		})
		return
	}
	n := -1
	turn := Text("ok")
	if len(req.Tools) > 0 {
		n = 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				n++
			}
		}
		turn = Text("done")
		if n < len(a.turns) {
			turn = a.turns[n]
		}
	}
	a.rec.Record(r, body, n)
	if turn.Tool != "" && turn.ID == "" {
		turn.ID = fmt.Sprintf("toolu_%02d", n)
	}
	turn.msgID = fmt.Sprintf("msg_%02d", n)
	if req.Stream {
		streamTurn(w, req.Model, turn)
		return
	}
	agenttest.WriteJSON(w, http.StatusOK, message(req.Model, turn, true))
}

// message returns turn as a whole Messages API message from model; with content false
// its content is empty, as in message_start.
func message(model string, turn Turn, content bool) map[string]any {
	m := map[string]any{
		"id": turn.msgID, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 100, "output_tokens": 1},
	}
	if !content {
		return m
	}
	m["content"] = []any{block(turn, true)}
	m["stop_reason"] = stopReason(turn)
	return m
}

// block returns turn's content block, whole or (full false) as in
// content_block_start.
func block(turn Turn, full bool) map[string]any {
	if turn.Tool == "" {
		text := ""
		if full {
			text = turn.Text
		}
		return map[string]any{"type": "text", "text": text}
	}
	input := any(map[string]any{})
	if full {
		input = turn.Input
	}
	return map[string]any{"type": "tool_use", "id": turn.ID, "name": turn.Tool, "input": input}
}

func stopReason(turn Turn) string {
	if turn.Tool != "" {
		return "tool_use"
	}
	return "end_turn"
}

// streamTurn writes turn as the Messages API's server-sent events.
func streamTurn(w http.ResponseWriter, model string, turn Turn) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	event("message_start", map[string]any{"type": "message_start", "message": message(model, turn, false)})
	event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block(turn, false)})
	if turn.Tool == "" {
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]string{"type": "text_delta", "text": turn.Text}})
	} else {
		input, _ := json.Marshal(turn.Input)
		// Sent in two pieces, as the real API splits its JSON.
		half := len(input) / 2
		for _, part := range []string{string(input[:half]), string(input[half:])} {
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]string{"type": "input_json_delta", "partial_json": part}})
		}
	}
	event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stopReason(turn), "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": 10}})
	event("message_stop", map[string]any{"type": "message_stop"})
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// ToolResult returns the tool_result for the tool call with id, as the model
// received it in a later request: its content flattened to text, and
// is_error. ok is false when no request holds it.
func (a *API) ToolResult(id string) (content string, isError bool, ok bool) {
	for _, req := range a.Requests() {
		var body struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if json.Unmarshal(req.Body, &body) != nil {
			continue
		}
		for _, m := range body.Messages {
			var blocks []struct {
				Type      string          `json:"type"`
				ToolUseID string          `json:"tool_use_id"`
				Content   json.RawMessage `json:"content"`
				IsError   bool            `json:"is_error"`
			}
			if json.Unmarshal(m.Content, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				if b.Type == "tool_result" && b.ToolUseID == id {
					return flatten(b.Content), b.IsError, true
				}
			}
		}
	}
	return "", false, false
}

// flatten returns a tool_result's content as text: a string as it is, a
// list of blocks as their texts joined by newlines.
func flatten(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	var texts []string
	for _, b := range blocks {
		texts = append(texts, b.Text)
	}
	return strings.Join(texts, "\n")
}
