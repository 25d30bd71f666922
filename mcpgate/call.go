package mcpgate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/tools"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// ActionName is the name of a gated call's action: mcp__SERVER__TOOL, as
// Claude Code names an MCP server's tools, so one rule on the name (and
// an argument) decides a tool of one server wherever it is called from.
func ActionName(server, tool string) string {
	if server == "" {
		server = "upstream"
	}
	return "mcp__" + server + "__" + tool
}

// callParams are a tools/call request's params, as the gate reads them.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Meta      struct {
		ProgressToken any `json:"progressToken,omitempty"`
	} `json:"_meta"`
}

// callTool holds a tools/call the policy gates for review, and reports
// whether it did (false: relay it).
func (s *session) callTool(req *jsonrpc.Request) bool {
	var p callParams
	if err := decode(req.Params, &p); err != nil || strings.TrimSpace(p.Name) == "" {
		s.respondError(req.ID, jsonrpc.CodeInvalidParams, "tools/call needs params {\"name\": …, \"arguments\": {…}}")
		return true
	}
	s.mu.Lock()
	info, known := s.tools[p.Name]
	s.mu.Unlock()
	if known {
		return s.hold(req, p, info)
	}
	// A tool the client has not listed (or not yet): list the upstream's
	// tools to read its annotations, then decide.
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.listTools()
		s.mu.Lock()
		info := s.tools[p.Name]
		s.mu.Unlock()
		if !s.hold(req, p, info) {
			s.noteCall(req)
			if err := s.upstream.Write(s.ctx, req); err != nil && s.ctx.Err() == nil {
				s.respond(req.ID, errorResult("hitl gate: the call could not be sent to the upstream server: "+err.Error()))
			}
		}
	}()
	return true
}

// hold holds the call for review when the policy gates it, and reports
// whether it did (false: it passes).
func (s *session) hold(req *jsonrpc.Request, p callParams, info *toolInfo) bool {
	var annotations *Annotations
	if info != nil {
		annotations = info.Annotations
	}
	gated, why := s.g.opts.Policy.Gated(p.Name, annotations)
	if !gated {
		s.g.log.Debug("mcp gate: call passes", "tool", p.Name, "why", why)
		return false
	}
	args := p.Arguments
	if isNull(args) {
		args = json.RawMessage("{}")
	}
	if !isObject(args) {
		s.respond(req.ID, errorResult("hitl gate: the arguments of "+p.Name+" are not a JSON object, so the call is not forwarded."))
		return true
	}
	ctx, cancel := context.WithCancel(s.ctx)
	s.mu.Lock()
	s.held[req.ID.Raw()] = cancel
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		s.review(ctx, req, p, args, info, why)
	}()
	return true
}

// review asks a person about a held call, then forwards it (with the
// person's edits) or answers the client with the reason it did not run.
func (s *session) review(ctx context.Context, req *jsonrpc.Request, p callParams, args json.RawMessage, info *toolInfo, why string) {
	s.mu.Lock()
	server, agent, shown := s.server, s.agent(), s.clientShown()
	s.mu.Unlock()
	call := tools.ToolCall{
		Agent:     shown,
		Kind:      hitl.KindMCP,
		KindInput: hitl.MCPInput(server, p.Name, args),
		Tool:      ActionName(server, p.Name),
		Input:     args,
		Via:       "hitl gate",
		Details:   details(server, p.Name, info, why),
	}
	if info != nil {
		call.Description = info.Description
		call.Annotations = info.Annotations.fields()
	}
	stop := s.reportProgress(ctx, p.Meta.ProgressToken, "waiting for a person to approve "+p.Name+" in hitl")
	v := tools.Review(ctx, s.g.svc, call, &tools.ReviewOptions{SourceAgent: agent, Timeout: s.g.opts.Timeout})
	stop()
	s.mu.Lock()
	_, still := s.held[req.ID.Raw()]
	delete(s.held, req.ID.Raw())
	s.mu.Unlock()
	if !still || ctx.Err() != nil {
		// The client cancelled the call: it expects no response.
		s.g.log.Info("mcp gate: call withdrawn by the client", "tool", p.Name)
		return
	}
	id := ""
	if v.Interaction != nil {
		id = v.Interaction.ID
	}
	if !v.Allow {
		s.g.log.Info("mcp gate: call not forwarded", "tool", p.Name, "interaction_id", id, "failed", v.Failed)
		s.respond(req.ID, errorResult(v.Reason))
		return
	}
	receipt := ""
	if v.Interaction != nil && v.Interaction.Result != nil {
		receipt = v.Interaction.Result.Receipt
	}
	fwd := req
	if v.UpdatedInput != nil || receipt != "" {
		params, err := forwardedParams(req.Params, v.UpdatedInput, receipt)
		if err != nil {
			s.respond(req.ID, errorResult("hitl gate: the approved call cannot be sent ("+err.Error()+"), so it is not forwarded."))
			return
		}
		fwd = &jsonrpc.Request{ID: req.ID, Method: req.Method, Params: params}
	}
	s.g.log.Info("mcp gate: call approved", "tool", p.Name, "interaction_id", id, "edited", v.UpdatedInput != nil)
	s.noteCall(fwd)
	if err := s.upstream.Write(s.ctx, fwd); err != nil {
		s.respond(req.ID, errorResult("hitl gate: the approved call could not be sent to the upstream server: "+err.Error()))
	}
}

// cancelHeld withdraws the review of a held call the client cancelled,
// and reports whether the cancellation was for one (false: relay it).
func (s *session) cancelHeld(req *jsonrpc.Request) bool {
	id, ok := cancelID(req)
	if !ok {
		return false
	}
	s.mu.Lock()
	cancel, held := s.held[id]
	delete(s.held, id)
	s.mu.Unlock()
	if held {
		cancel()
	}
	return held
}

// reportProgress sends the client progress notifications for token
// (none when nil) until the returned stop is called, so a client that
// resets its request timeout on progress waits for the person.
func (s *session) reportProgress(ctx context.Context, token any, message string) (stop func()) {
	if token == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(s.g.opts.ProgressInterval)
		defer t.Stop()
		for n := 1; ; n++ {
			params, err := json.Marshal(map[string]any{"progressToken": token, "progress": n, "message": message})
			if err == nil {
				err = s.client.Write(ctx, &jsonrpc.Request{Method: "notifications/progress", Params: params})
			}
			if err != nil && ctx.Err() == nil {
				s.g.log.Warn("mcp gate: cannot report progress", "error", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// details is what the person reads about the tool beside its
// description: the server, its annotations, and why the call is gated.
func details(server, tool string, info *toolInfo, why string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Tool `%s` of the MCP server `%s`", tool, server)
	if info != nil && info.Title != "" {
		fmt.Fprintf(&b, " (%s)", info.Title)
	}
	b.WriteString(". ")
	var a *Annotations
	if info != nil {
		a = info.Annotations
	}
	b.WriteString(a.describe())
	if info == nil {
		b.WriteString(" The server has not listed this tool.")
	}
	b.WriteString(" Gated because " + why + ".")
	return b.String()
}

// errorResult is a tools/call result that tells the model the call did
// not run, and why.
func errorResult(text string) map[string]any {
	return map[string]any{
		"content": []map[string]any{{"type": "text", "text": text}},
		"isError": true,
	}
}

// respondError answers a client's request with a JSON-RPC error.
func (s *session) respondError(id jsonrpc.ID, code int64, message string) {
	res := &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: message}}
	if err := s.client.Write(s.ctx, res); err != nil && s.ctx.Err() == nil {
		s.g.log.Warn("mcp gate: cannot answer the client", "error", err)
	}
}

// MetaReceipt is the key of the call's _meta under which the gate gives
// the upstream server the approval's receipt (see docs/receipts.md), so
// a server that checks receipts can refuse calls nobody approved.
const MetaReceipt = "hitl/receipt"

// forwardedParams returns a tools/call's params as the gate forwards an
// approved call: with the edited arguments, when not nil, and the
// receipt, when not "", in _meta (other _meta fields kept).
func forwardedParams(params, args json.RawMessage, receipt string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := decode(params, &m); err != nil {
		return nil, err
	}
	if args != nil {
		m["arguments"] = args
	}
	if receipt != "" {
		meta := map[string]json.RawMessage{}
		if raw, ok := m["_meta"]; ok && !isNull(raw) {
			if err := decode(raw, &meta); err != nil {
				return nil, fmt.Errorf("_meta is not an object: %w", err)
			}
		}
		r, err := json.Marshal(receipt)
		if err != nil {
			return nil, err
		}
		meta[MetaReceipt] = r
		b, err := json.Marshal(meta)
		if err != nil {
			return nil, err
		}
		m["_meta"] = b
	}
	return json.Marshal(m)
}
