package codextest

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

// Model is the model Codex is configured to ask for: one in the catalog
// built into the binary, so that Codex offers its apply_patch tool (for a
// model it does not know it warns and offers no apply_patch).
const Model = "gpt-5.5"

// Turn is one reply of the scripted model: a function call, a freeform
// (custom) tool call, or final text.
type Turn struct {
	// Name is the tool to call; "" means the turn is Text.
	Name string
	// Arguments, for a function call, is marshalled to the call's JSON
	// arguments string.
	Arguments any
	// Input, for a custom tool call (Custom true), is its raw input.
	Input string
	// Custom makes the call a custom_tool_call (apply_patch is one).
	Custom bool
	// Namespace, for a function call, is the namespace the tool was
	// listed in: "mcp__<server>" for an MCP server's tools.
	Namespace string
	// Search, when Name is "tool_search", is the query of a client-side
	// tool_search call, which Codex answers with the deferred tools (MCP
	// tools among them) that match.
	Search string
	// Text is the final answer when Name is "".
	Text string
}

// Exec returns a turn in which the model runs cmd with Codex's shell tool,
// exec_command.
func Exec(cmd string) Turn {
	return FunctionCall("exec_command", map[string]any{"cmd": cmd})
}

// FunctionCall returns a turn in which the model calls the function tool
// name with args.
func FunctionCall(name string, args any) Turn { return Turn{Name: name, Arguments: args} }

// ApplyPatch returns a turn in which the model edits files with Codex's
// apply_patch tool, a freeform tool whose input is the patch itself.
func ApplyPatch(patch string) Turn { return Turn{Name: "apply_patch", Input: patch, Custom: true} }

// MCPCall returns a turn in which the model calls tool of the MCP server
// configured as server, with args: a function call named tool in the
// namespace mcp__<server>, as Codex listed it in a tool_search output (see
// ToolSearch).
func MCPCall(server, tool string, args any) Turn {
	return Turn{Name: tool, Namespace: "mcp__" + server, Arguments: args}
}

// ToolSearch returns a turn in which the model searches Codex's deferred
// tools for query: Codex offers MCP tools only through tool_search, and a
// tool it found can be called in a later turn.
func ToolSearch(query string) Turn { return Turn{Name: "tool_search", Search: query} }

// Text returns a turn in which the model answers text and stops.
func Text(text string) Turn { return Turn{Text: text} }

// CallID returns the call_id the fake API gives the tool call of turn n.
func CallID(n int) string { return fmt.Sprintf("call_%02d", n) }

// Request is one POST /v1/responses the fake API received.
type Request = agenttest.Request

// API is a scripted fake of the OpenAI Responses API, streaming. A
// request's place in the script is the number of model outputs (tool calls
// and assistant messages) its input already holds, so a retried request
// gets the same turn again.
type API struct {
	*httptest.Server

	t     testing.TB
	turns []Turn

	rec agenttest.Recorder
}

// NewAPI starts a fake Responses API on loopback that plays turns. It stops
// when the test ends. Past the end of the script it answers "done".
func NewAPI(t testing.TB, turns ...Turn) *API {
	t.Helper()
	a := &API{t: t, turns: turns}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.Close)
	return a
}

// Requests returns the POST /v1/responses requests received so far, in
// order.
func (a *API) Requests() []Request {
	return a.rec.Requests()
}

// Others returns the requests other than POST /v1/responses, in order, as
// "METHOD path".
func (a *API) Others() []string {
	return a.rec.Others()
}

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == "/v1/responses" {
		a.serveResponses(w, r)
		return
	}
	a.rec.Note(r)
	a.t.Logf("fake Responses API: unexpected %s %s", r.Method, r.URL.RequestURI())
	agenttest.WriteJSON(w, http.StatusNotFound, map[string]any{
		"error": map[string]any{"type": "invalid_request_error", "message": "the fake Responses API has no " + r.URL.Path},
	})
}

// responsesRequest is the part of a Responses API request the fake reads.
type responsesRequest struct {
	Input []struct {
		Type string `json:"type"`
		Role string `json:"role"`
	} `json:"input"`
	Tools []json.RawMessage `json:"tools"`
}

func (a *API) serveResponses(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		agenttest.WriteJSON(w, http.StatusBadRequest, map[string]any{
			"error": map[string]any{"type": "invalid_request_error", "message": err.Error()},
		})
		return
	}
	n := -1
	turn := Text("ok")
	if len(req.Tools) > 0 {
		n = 0
		for _, item := range req.Input {
			switch {
			case item.Type == "function_call", item.Type == "custom_tool_call", item.Type == "tool_search_call",
				item.Type == "message" && item.Role == "assistant":
				n++
			}
		}
		turn = Text("done")
		if n < len(a.turns) {
			turn = a.turns[n]
		}
	}
	a.rec.Record(r, body, n)
	streamTurn(w, n, turn)
}

// outputItem returns turn as the Responses API output item of turn n.
func outputItem(n int, turn Turn) map[string]any {
	switch {
	case turn.Name == "":
		return map[string]any{
			"type": "message", "id": fmt.Sprintf("msg_%02d", n), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": turn.Text, "annotations": []any{}}},
		}
	case turn.Name == "tool_search":
		return map[string]any{
			"type": "tool_search_call", "id": fmt.Sprintf("tsc_%02d", n), "call_id": CallID(n),
			"execution": "client", "arguments": map[string]any{"query": turn.Search}, "status": "completed",
		}
	case turn.Custom:
		return map[string]any{
			"type": "custom_tool_call", "id": fmt.Sprintf("ctc_%02d", n), "call_id": CallID(n),
			"name": turn.Name, "input": turn.Input, "status": "completed",
		}
	default:
		args, err := json.Marshal(turn.Arguments)
		if err != nil {
			panic(fmt.Sprintf("codextest: marshal arguments of %s: %v", turn.Name, err))
		}
		item := map[string]any{
			"type": "function_call", "id": fmt.Sprintf("fc_%02d", n), "call_id": CallID(n),
			"name": turn.Name, "arguments": string(args), "status": "completed",
		}
		if turn.Namespace != "" {
			item["namespace"] = turn.Namespace
		}
		return item
	}
}

// streamTurn writes turn as the Responses API's server-sent events: the
// response created, its one output item done, the response completed.
func streamTurn(w http.ResponseWriter, n int, turn Turn) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	id := fmt.Sprintf("resp_%02d", n)
	event := func(data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], b)
	}
	event(map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	event(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": outputItem(n, turn)})
	event(map[string]any{"type": "response.completed", "response": map[string]any{
		"id": id,
		"usage": map[string]any{
			"input_tokens": 100, "input_tokens_details": map[string]int{"cached_tokens": 0},
			"output_tokens": 10, "output_tokens_details": map[string]int{"reasoning_tokens": 0},
			"total_tokens": 110,
		},
	}})
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// ToolOutput returns the output of the tool call with callID as the model
// received it in a later request (a function_call_output or
// custom_tool_call_output), flattened to text. ok is false when no request
// holds it.
func (a *API) ToolOutput(callID string) (output string, ok bool) {
	for _, req := range a.Requests() {
		var body struct {
			Input []struct {
				Type   string          `json:"type"`
				CallID string          `json:"call_id"`
				Output json.RawMessage `json:"output"`
			} `json:"input"`
		}
		if json.Unmarshal(req.Body, &body) != nil {
			continue
		}
		for _, item := range body.Input {
			if (item.Type == "function_call_output" || item.Type == "custom_tool_call_output") && item.CallID == callID {
				return flatten(item.Output), true
			}
		}
	}
	return "", false
}

// flatten returns a tool output as text: a string as it is, a list of
// content items as their texts joined by newlines.
func flatten(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var items []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &items)
	var texts []string
	for _, it := range items {
		texts = append(texts, it.Text)
	}
	return strings.Join(texts, "\n")
}
