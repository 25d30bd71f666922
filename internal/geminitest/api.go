package geminitest

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

// Model is the model Gemini CLI is told to use (-m). Naming one keeps the
// CLI from asking a routing model first, which it does for "auto".
const Model = "gemini-2.5-flash"

// Turn is one reply of the scripted model: a function call, or final text.
type Turn struct {
	// Name is the function to call; "" means the turn is Text.
	Name string
	// Args are the call's arguments, marshalled to a JSON object.
	Args any
	// Text is the final answer when Name is "".
	Text string
}

// Shell returns a turn in which the model runs command with Gemini CLI's
// shell tool, run_shell_command.
func Shell(command string) Turn {
	return Call("run_shell_command", map[string]any{"command": command})
}

// Call returns a turn in which the model calls the function name with args.
func Call(name string, args any) Turn { return Turn{Name: name, Args: args} }

// Text returns a turn in which the model answers text and stops.
func Text(text string) Turn { return Turn{Text: text} }

// CallID returns the id the fake API gives the function call of turn n.
func CallID(n int) string { return fmt.Sprintf("call_%02d", n) }

// Request is one POST …:generateContent or …:streamGenerateContent the fake
// API received.
type Request = agenttest.Request

// API is a scripted fake of the Gemini API (generativelanguage, v1beta). A
// request's place in the script is the number of model turns its contents
// already hold, so a retried request gets the same turn again.
type API struct {
	*httptest.Server

	t     testing.TB
	turns []Turn

	rec agenttest.Recorder
}

// NewAPI starts a fake Gemini API on loopback that plays turns. It stops
// when the test ends. Past the end of the script it answers "done".
func NewAPI(t testing.TB, turns ...Turn) *API {
	t.Helper()
	a := &API{t: t, turns: turns}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.Close)
	return a
}

// Requests returns the content generation requests received so far, in
// order.
func (a *API) Requests() []Request {
	return a.rec.Requests()
}

// Others returns the other requests, in order, as "METHOD path".
func (a *API) Others() []string {
	return a.rec.Others()
}

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	_, method, _ := strings.Cut(r.URL.Path, ":")
	switch {
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1beta/models/") &&
		(method == "generateContent" || method == "streamGenerateContent"):
		a.serveGenerate(w, r, method == "streamGenerateContent")
	case r.Method == http.MethodPost && method == "countTokens":
		a.note(r)
		agenttest.WriteJSON(w, http.StatusOK, map[string]int{"totalTokens": 100})
	default:
		a.note(r)
		a.t.Logf("fake Gemini API: unexpected %s %s", r.Method, r.URL.RequestURI())
		agenttest.WriteJSON(w, http.StatusNotFound, map[string]any{
			"error": map[string]any{"code": 404, "status": "NOT_FOUND", "message": "the fake Gemini API has no " + r.URL.Path},
		})
	}
}

func (a *API) note(r *http.Request) {
	a.rec.Note(r)
}

// generateRequest is the part of a generateContent request the fake reads.
type generateRequest struct {
	Contents []struct {
		Role string `json:"role"`
	} `json:"contents"`
	Tools []json.RawMessage `json:"tools"`
}

func (a *API) serveGenerate(w http.ResponseWriter, r *http.Request, stream bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req generateRequest
	if err := json.Unmarshal(body, &req); err != nil {
		agenttest.WriteJSON(w, http.StatusBadRequest, map[string]any{
			"error": map[string]any{"code": 400, "status": "INVALID_ARGUMENT", "message": err.Error()},
		})
		return
	}
	n := -1
	turn := Text("ok")
	if len(req.Tools) > 0 {
		n = 0
		for _, c := range req.Contents {
			if c.Role == "model" {
				n++
			}
		}
		turn = Text("done")
		if n < len(a.turns) {
			turn = a.turns[n]
		}
	}
	a.rec.Record(r, body, n)
	resp := response(n, turn)
	if !stream {
		agenttest.WriteJSON(w, http.StatusOK, resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	b, _ := json.Marshal(resp)
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// response returns turn as a whole GenerateContentResponse of turn n.
func response(n int, turn Turn) map[string]any {
	part := map[string]any{"text": turn.Text}
	if turn.Name != "" {
		part = map[string]any{"functionCall": map[string]any{"id": CallID(n), "name": turn.Name, "args": turn.Args}}
	}
	return map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP", "index": 0,
		}},
		"usageMetadata": map[string]int{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
		"modelVersion":  Model,
	}
}

// FunctionResponse returns the response part for the function call with
// id, as the model received it in a later request: its "response" object.
// ok is false when no request holds it.
func (a *API) FunctionResponse(id string) (response map[string]any, ok bool) {
	for _, req := range a.Requests() {
		var body struct {
			Contents []struct {
				Parts []struct {
					FunctionResponse *struct {
						ID       string         `json:"id"`
						Response map[string]any `json:"response"`
					} `json:"functionResponse"`
				} `json:"parts"`
			} `json:"contents"`
		}
		if json.Unmarshal(req.Body, &body) != nil {
			continue
		}
		for _, c := range body.Contents {
			for _, p := range c.Parts {
				if p.FunctionResponse != nil && p.FunctionResponse.ID == id {
					return p.FunctionResponse.Response, true
				}
			}
		}
	}
	return nil, false
}
