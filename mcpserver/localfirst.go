package mcpserver

import (
	"context"
	"encoding/json"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
	"github.com/hitl-sh/hitl/tools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Local first (Options.LocalFirst): a question is asked of hitl's people
// and, through MCP elicitation, of the person at the client, at once.
// Whoever answers first wins; the other side learns it: an answer in
// hitl cancels the elicitation, an answer at the client cancels the
// question in hitl (its card ends, with the reason), and the model reads
// the client's answer. A client that declines or dismisses leaves the
// question to hitl.

// LocalAnswerer is who answered at the client, as the model reads it.
const LocalAnswerer = "the user at the MCP client"

// localReason is the reason a question answered at the client is
// cancelled in hitl with.
const localReason = "answered at the MCP client"

// canElicit reports whether the session's client can answer a form
// elicitation sent as a request (protocol revisions before 2026-07-28).
func canElicit(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil || p.ProtocolVersion >= "2026-07-28" {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil
}

// localFirst runs a call of the asking tool name both ways, and returns
// the result; ok is false when the question cannot be asked at the client
// (an action, a handoff), and the caller asks in hitl alone.
func (s *Server) localFirst(ctx context.Context, ss *mcp.ServerSession, name string, args json.RawMessage, agent string) (*tools.Result, bool) {
	req, err := tools.Request(name, args)
	if err != nil {
		return nil, false
	}
	schema, read := elicitForm(req)
	if schema == nil {
		return nil, false
	}
	if req.SourceAgent == "" {
		req.SourceAgent = agent
	}
	in, err := ask.Create(ctx, s.svc, req)
	if err != nil {
		return tools.Render(name, in, err), true
	}
	ectx, cancelElicit := context.WithCancel(ctx)
	defer cancelElicit()
	local := make(chan json.RawMessage, 1)
	go func() {
		res, err := ss.Elicit(ectx, &mcp.ElicitParams{Message: req.Question, RequestedSchema: schema})
		if err != nil || res == nil || res.Action != "accept" {
			return // declined, dismissed or cancelled: hitl's people answer
		}
		if v, ok := read(res.Content); ok {
			local <- v
		}
	}()
	wctx, cancelWait := context.WithTimeout(ctx, time.Duration(req.Timeout*float64(time.Second))+time.Minute)
	defer cancelWait()
	remote := make(chan *hitl.Interaction, 1)
	go func() {
		got, err := s.svc.Wait(wctx, in.ID)
		if err == nil && got.Status.Terminal() {
			remote <- got
		} else {
			close(remote)
		}
	}()
	select {
	case got, ok := <-remote:
		cancelElicit()
		if !ok {
			return tools.Render(name, nil, s.withdraw(ctx, in)), true
		}
		return tools.Render(name, got, nil), true
	case v := <-local:
		cancelWait()
		ended, err := s.svc.Cancel(context.WithoutCancel(ctx), in.ID, localReason)
		if err != nil && hitl.ErrorCode(err) == hitl.ECONFLICT {
			// Answered in hitl meanwhile: that answer won.
			if got, err := s.svc.Get(context.WithoutCancel(ctx), in.ID); err == nil && got.Status == hitl.StatusAnswered {
				return tools.Render(name, got, nil), true
			}
		}
		if ended == nil {
			ended = in
		}
		answered := *ended
		answered.Status = hitl.StatusAnswered
		answered.Result = &hitl.Result{Value: v, RespondedBy: LocalAnswerer, Channel: hitl.ChannelMCP, RespondedAt: time.Now().UTC()}
		return tools.Render(name, &answered, nil), true
	}
}

// withdraw cancels a question whose wait ended without an outcome (the
// call was cancelled, or the server stopped reporting), and returns why.
func (s *Server) withdraw(ctx context.Context, in *hitl.Interaction) error {
	if ctx.Err() != nil {
		_, _ = s.svc.Cancel(context.WithoutCancel(ctx), in.ID, "the MCP client cancelled the call")
		return ctx.Err()
	}
	return hitl.Errorf(hitl.EUNAVAILABLE, "the hitl server reported no outcome after the question's deadline")
}

// elicitForm returns the elicitation form for a question and how to read
// the question's value from the form's content; nil for a question that
// cannot be asked as a flat form.
func elicitForm(req hitl.CreateRequest) (map[string]any, func(map[string]any) (json.RawMessage, bool)) {
	field := func(name string, prop map[string]any) (map[string]any, func(map[string]any) (json.RawMessage, bool)) {
		return map[string]any{"type": "object", "properties": map[string]any{name: prop}, "required": []string{name}},
			func(c map[string]any) (json.RawMessage, bool) {
				v, ok := c[name]
				if !ok {
					return nil, false
				}
				b, err := json.Marshal(v)
				return b, err == nil
			}
	}
	keys := func() ([]string, []string) {
		var k, l []string
		for _, o := range req.Options {
			k, l = append(k, o.Key), append(l, o.Label)
		}
		return k, l
	}
	switch req.Type {
	case hitl.TypeFreeText, "":
		return field("answer", map[string]any{"type": "string", "title": "Your answer"})
	case hitl.TypeApproval:
		return field("approve", map[string]any{"type": "boolean", "title": "Approve"})
	case hitl.TypeSingleChoice:
		k, l := keys()
		return field("choice", map[string]any{"type": "string", "title": "Choose one", "enum": k, "enumNames": l})
	case hitl.TypeMultiChoice:
		k, _ := keys()
		return field("choices", map[string]any{"type": "array", "title": "Choose any", "items": map[string]any{"type": "string", "enum": k}})
	case hitl.TypeForm:
		var schema map[string]any
		if json.Unmarshal(req.FormSchema, &schema) != nil {
			return nil, nil
		}
		return schema, func(c map[string]any) (json.RawMessage, bool) {
			b, err := json.Marshal(c)
			return b, err == nil
		}
	}
	return nil, nil
}
