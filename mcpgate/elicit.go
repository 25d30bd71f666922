package mcpgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
	"github.com/hitl-sh/hitl/tools"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// ElicitMode says who answers an upstream server's elicitation/create
// requests.
type ElicitMode string

// The elicitation modes.
const (
	// ElicitHitl asks hitl's people (inbox, Slack, email, phone), always.
	ElicitHitl ElicitMode = "hitl"
	// ElicitClient passes every elicitation on to the client, as if the
	// gate were not there.
	ElicitClient ElicitMode = "client"
	// ElicitClientElseHitl passes an elicitation on when the client
	// declared support for its mode (form or URL), and asks in hitl
	// otherwise: a headless agent's upstream still reaches a person.
	ElicitClientElseHitl ElicitMode = "client-else-hitl"
)

// valid reports whether m is one of the modes.
func (m ElicitMode) valid() bool {
	return m == ElicitHitl || m == ElicitClient || m == ElicitClientElseHitl
}

// elicitSupport is what a client declared it can elicit.
type elicitSupport struct{ form, url bool }

// readElicitSupport reads a client's elicitation capability: absent is
// none, {} is form only (as before URL mode existed), else the modes it
// names.
func readElicitSupport(raw json.RawMessage) elicitSupport {
	if isNull(raw) {
		return elicitSupport{}
	}
	var c map[string]json.RawMessage
	if decode(raw, &c) != nil {
		return elicitSupport{}
	}
	if len(c) == 0 {
		return elicitSupport{form: true}
	}
	_, form := c["form"]
	_, u := c["url"]
	return elicitSupport{form: form, url: u}
}

// elicitParams are an elicitation/create request's params.
type elicitParams struct {
	Mode            string          `json:"mode,omitempty"` // "form" (or "") or "url"
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
}

// elicitResult is the answer to an elicitation: accept (with content for
// a form), decline or cancel.
type elicitResult struct {
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
}

// elicit answers the upstream's elicitation in hitl when the mode says
// so, and reports whether it does (false: relay it to the client).
func (s *session) elicit(req *jsonrpc.Request) bool {
	var p elicitParams
	if decode(req.Params, &p) != nil {
		return false
	}
	if !s.asksInHitl(p.Mode) {
		return false
	}
	ctx, cancel := context.WithCancel(s.ctx)
	s.mu.Lock()
	s.eliciting[req.ID.Raw()] = cancel
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		res := s.askElicitation(ctx, p)
		s.mu.Lock()
		_, still := s.eliciting[req.ID.Raw()]
		delete(s.eliciting, req.ID.Raw())
		s.mu.Unlock()
		if !still {
			return // the upstream cancelled it
		}
		out, err := newResponse(req.ID, res)
		if err == nil {
			err = s.upstream.Write(s.ctx, out)
		}
		if err != nil && s.ctx.Err() == nil {
			s.g.log.Warn("mcp gate: cannot answer the upstream's elicitation", "error", err)
		}
	}()
	return true
}

// asksInHitl reports whether the gate asks an elicitation of the mode
// ("form", "" or "url") in hitl rather than passing it to the client.
func (s *session) asksInHitl(mode string) bool {
	s.mu.Lock()
	sup := s.elicits
	s.mu.Unlock()
	switch s.g.opts.Elicit {
	case ElicitClient:
		return false
	case ElicitClientElseHitl:
		return !(mode == "url" && sup.url || mode != "url" && sup.form)
	}
	return true
}

// askElicitation asks hitl's people an elicitation and returns their
// answer: a form's values (accept), a URL's done (accept) or decline,
// and cancel when nobody answered, the question was cancelled, or hitl
// could not ask it.
func (s *session) askElicitation(ctx context.Context, p elicitParams) elicitResult {
	req, err := s.elicitRequest(p)
	if err != nil {
		s.g.log.Warn("mcp gate: cannot ask the elicitation in hitl", "error", err)
		return elicitResult{Action: "cancel"}
	}
	wctx, cancel := context.WithTimeout(ctx, s.g.opts.ElicitTimeout+tools.ReviewGrace)
	defer cancel()
	in, err := ask.Ask(wctx, s.g.svc, req)
	if err != nil || in == nil || in.Result == nil {
		if err != nil && !errors.Is(err, context.Canceled) {
			s.g.log.Info("mcp gate: elicitation not answered", "problem", hitl.ErrorMessage(err))
		}
		return elicitResult{Action: "cancel"}
	}
	s.g.log.Info("mcp gate: elicitation answered", "interaction_id", in.ID)
	if p.Mode == "url" {
		var key string
		_ = json.Unmarshal(in.Result.Value, &key)
		if key == "accept" {
			return elicitResult{Action: "accept"}
		}
		return elicitResult{Action: "decline"}
	}
	return elicitResult{Action: "accept", Content: in.Result.Value}
}

// elicitRequest is the hitl question for an elicitation: a form built
// from its schema, or a choice carrying its URL.
func (s *session) elicitRequest(p elicitParams) (hitl.CreateRequest, error) {
	s.mu.Lock()
	server, agent, shown := s.server, s.agent(), s.clientShown()
	s.mu.Unlock()
	if server == "" {
		server = "upstream"
	}
	msg := strings.TrimSpace(p.Message)
	if msg == "" {
		msg = "The MCP server " + server + " asks for input"
	}
	req := hitl.CreateRequest{
		Question:    msg,
		Timeout:     s.g.opts.ElicitTimeout.Seconds(),
		SourceAgent: agent,
		Metadata:    map[string]any{"mcp_server": server, "via": "hitl gate elicitation"},
	}
	ctxText := fmt.Sprintf("The MCP server `%s` asks this while serving %s.", server, shown)
	if p.Mode == "url" {
		u, err := url.Parse(p.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return req, fmt.Errorf("the elicitation's url is not an http(s) URL")
		}
		req.Type = hitl.TypeSingleChoice
		req.Context = ctxText + "\n\nOpen this link and do what it asks: " + u.String() + "\n\nThen choose **Done**; choose **Decline** if you will not."
		req.Options = hitl.OptionList{{Key: "accept", Label: "Done"}, {Key: "decline", Label: "Decline"}}
		req.Metadata["url"] = u.String()
		if p.ElicitationID != "" {
			req.Metadata["elicitation_id"] = p.ElicitationID
		}
		return req, nil
	}
	if isNull(p.RequestedSchema) {
		p.RequestedSchema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	req.Type = hitl.TypeForm
	req.FormSchema = p.RequestedSchema
	req.Context = ctxText
	return req, nil
}

// cancelEliciting withdraws the hitl question of an elicitation the
// upstream cancelled, and reports whether the cancellation was for one
// (false: relay it to the client).
func (s *session) cancelEliciting(req *jsonrpc.Request) bool {
	id, ok := cancelID(req)
	if !ok {
		return false
	}
	s.mu.Lock()
	cancel, asking := s.eliciting[id]
	delete(s.eliciting, id)
	s.mu.Unlock()
	if asking {
		cancel()
	}
	return asking
}
