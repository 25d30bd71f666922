// Package chatfake is a scripted fake of the OpenAI Chat Completions API
// (POST /v1/chat/completions, streaming or not, and GET /v1/models), for
// the harnesses that run a real coding agent configured with an
// OpenAI-compatible provider: internal/copilottest (GitHub Copilot CLI)
// and internal/opencodetest (OpenCode). It is for tests only.
//
// A request's place in the script is the number of assistant messages its
// conversation already holds, so a retried request gets the same turn
// again; a request that offers no tools (a title, a summary) is answered
// "ok" outside the script.
package chatfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Turn is one reply of the scripted model: a tool call, or final text.
type Turn struct {
	// Name is the tool to call; "" means the turn is Text.
	Name string
	// Args are the call's arguments, marshalled to its JSON arguments
	// string.
	Args any
	// Text is the final answer when Name is "".
	Text string
}

// Call returns a turn in which the model calls the tool name with args.
func Call(name string, args any) Turn { return Turn{Name: name, Args: args} }

// Text returns a turn in which the model answers text and stops.
func Text(text string) Turn { return Turn{Text: text} }

// CallID returns the id the fake gives the tool call of turn n.
func CallID(n int) string { return fmt.Sprintf("call_%02d", n) }

// Request is one POST /v1/chat/completions the fake received.
type Request struct {
	// Path is the request's path and query.
	Path string
	// Header is the request's header.
	Header http.Header
	// Body is the request body as sent.
	Body json.RawMessage
	// Turn is the index of the scripted turn it was answered with; -1 for a
	// request outside the conversation (no tools offered).
	Turn int
}

// API is the fake. Its URL plus "/v1" is the provider's base URL.
type API struct {
	*httptest.Server

	// Model is the model id GET /v1/models lists and replies name.
	Model string

	t     testing.TB
	turns []Turn

	mu       sync.Mutex
	requests []Request
	other    []string // the other requests, "METHOD path"
}

// New starts a fake on loopback that plays turns as model; it stops when
// the test ends. Past the end of the script it answers "done".
func New(t testing.TB, model string, turns ...Turn) *API {
	t.Helper()
	a := &API{Model: model, t: t, turns: turns}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.Close)
	return a
}

// Requests returns the chat completion requests received so far, in
// order.
func (a *API) Requests() []Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Request(nil), a.requests...)
}

// Others returns the other requests, in order, as "METHOD path".
func (a *API) Others() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.other...)
}

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/chat/completions"):
		a.serveCompletion(w, r)
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		a.note(r)
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": a.Model, "object": "model", "created": 1700000000, "owned_by": "chatfake"},
		}})
	default:
		a.note(r)
		a.t.Logf("fake Chat Completions API: unexpected %s %s", r.Method, r.URL.RequestURI())
		writeJSON(w, http.StatusNotFound, map[string]any{
			"error": map[string]any{"type": "invalid_request_error", "message": "the fake Chat Completions API has no " + r.URL.Path},
		})
	}
}

func (a *API) note(r *http.Request) {
	a.mu.Lock()
	a.other = append(a.other, r.Method+" "+r.URL.RequestURI())
	a.mu.Unlock()
}

// completionRequest is the part of a request the fake reads.
type completionRequest struct {
	Messages []struct {
		Role string `json:"role"`
	} `json:"messages"`
	Tools  []json.RawMessage `json:"tools"`
	Stream bool              `json:"stream"`
}

func (a *API) serveCompletion(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req completionRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{
			"error": map[string]any{"type": "invalid_request_error", "message": err.Error()},
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
	a.mu.Lock()
	a.requests = append(a.requests, Request{Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body, Turn: n})
	a.mu.Unlock()
	id := fmt.Sprintf("chatcmpl-%02d", n+1)
	usage := map[string]int{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
	message := map[string]any{"role": "assistant", "content": turn.Text}
	finish := "stop"
	var toolCalls []any
	if turn.Name != "" {
		args, err := json.Marshal(turn.Args)
		if err != nil {
			panic(fmt.Sprintf("chatfake: marshal arguments of %s: %v", turn.Name, err))
		}
		toolCalls = []any{map[string]any{"index": 0, "id": CallID(n), "type": "function",
			"function": map[string]any{"name": turn.Name, "arguments": string(args)}}}
		message = map[string]any{"role": "assistant", "content": nil, "tool_calls": toolCalls}
		finish = "tool_calls"
	}
	if !req.Stream {
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": 1700000000, "model": a.Model,
			"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	chunk := func(delta map[string]any, finish any, usage any) {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": a.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if usage != nil {
			c["usage"] = usage
		}
		b, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	if toolCalls != nil {
		chunk(map[string]any{"tool_calls": toolCalls}, nil, nil)
	} else {
		chunk(map[string]any{"content": turn.Text}, nil, nil)
	}
	chunk(map[string]any{}, finish, usage)
	fmt.Fprint(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// ToolResult returns the content of the "tool" message answering the call
// with id, as the model received it in a later request, flattened to text;
// ok is false when no request holds it.
func (a *API) ToolResult(id string) (content string, ok bool) {
	for _, req := range a.Requests() {
		var body struct {
			Messages []struct {
				Role       string          `json:"role"`
				ToolCallID string          `json:"tool_call_id"`
				Content    json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if json.Unmarshal(req.Body, &body) != nil {
			continue
		}
		for _, m := range body.Messages {
			if m.Role == "tool" && m.ToolCallID == id {
				return flatten(m.Content), true
			}
		}
	}
	return "", false
}

// Offered reports whether request req offered the model the tool name.
func Offered(req Request, name string) bool {
	return slices.Contains(ToolNames(req), name)
}

// ToolNames returns the names of the tools req offered, in order.
func ToolNames(req Request) []string {
	var body struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	json.Unmarshal(req.Body, &body)
	var names []string
	for _, tool := range body.Tools {
		names = append(names, tool.Function.Name)
	}
	return names
}

// flatten returns a message's content as text: a string as it is, a list
// of parts as their texts joined by newlines.
func flatten(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var texts []string
	for _, p := range parts {
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n")
}
