package mcpgate

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The 2026-07-28 revision of MCP has no session to send an
// elicitation/create request on: a tools/call result says
// "input_required" with the elicitations it needs (inputRequests) and an
// opaque requestState, and the client calls again with the answers
// (inputResponses). Each request carries the client's capabilities in
// its _meta. The gate declares elicitation there when it answers in the
// client's place, answers such results in hitl, and calls again itself,
// so the client sees only the final result.

// metaCapabilities is the _meta key of the client's capabilities.
const metaCapabilities = "io.modelcontextprotocol/clientCapabilities"

// maxRounds bounds the gate's calls again on one tools/call.
const maxRounds = 10

// declareInMeta reads the client's capabilities from a request's _meta
// and, when the gate answers elicitations the client cannot, declares
// elicitation there in the client's place.
func (s *session) declareInMeta(req *jsonrpc.Request) {
	var params map[string]json.RawMessage
	if decode(req.Params, &params) != nil || isNull(params["_meta"]) {
		return
	}
	var meta map[string]json.RawMessage
	if decode(params["_meta"], &meta) != nil || isNull(meta[metaCapabilities]) {
		return
	}
	var caps map[string]json.RawMessage
	if decode(meta[metaCapabilities], &caps) != nil {
		return
	}
	sup := readElicitSupport(caps["elicitation"])
	s.mu.Lock()
	s.elicits = sup
	s.mu.Unlock()
	if s.g.opts.Elicit == ElicitClient || sup.form && sup.url {
		return
	}
	caps["elicitation"] = json.RawMessage(`{"form":{},"url":{}}`)
	var err error
	if meta[metaCapabilities], err = json.Marshal(caps); err != nil {
		return
	}
	if params["_meta"], err = json.Marshal(meta); err != nil {
		return
	}
	if b, err := json.Marshal(params); err == nil {
		req.Params = b
	}
}

// inputRequired is a result that asks for input.
type inputRequired struct {
	ResultType    string `json:"resultType"`
	InputRequests map[string]struct {
		Method string       `json:"method"`
		Params elicitParams `json:"params"`
	} `json:"inputRequests"`
	RequestState string `json:"requestState"`
}

// answersInHitl reports whether res is an input_required result whose
// every request is an elicitation the gate asks in hitl.
func (s *session) answersInHitl(res json.RawMessage) (*inputRequired, bool) {
	var r inputRequired
	if decode(res, &r) != nil || r.ResultType != "input_required" || len(r.InputRequests) == 0 {
		return nil, false
	}
	for _, ir := range r.InputRequests {
		if ir.Method != "elicitation/create" || !s.asksInHitl(ir.Params.Mode) {
			return nil, false
		}
	}
	return &r, true
}

// completeCall answers the elicitations of an input_required result to
// the client's tools/call id in hitl and calls again, until the upstream
// gives a result the gate does not answer, which goes to the client.
func (s *session) completeCall(id jsonrpc.ID, params json.RawMessage, r *inputRequired) {
	defer s.wg.Done()
	ctx := s.ctx
	for round := 0; round < maxRounds; round++ {
		answers := map[string]elicitResult{}
		for key, ir := range r.InputRequests {
			answers[key] = s.askElicitation(ctx, ir.Params)
		}
		var p map[string]any
		if decode(params, &p) != nil {
			s.respondError(id, jsonrpc.CodeInternalError, "hitl gate: cannot call again with the answers")
			return
		}
		p["inputResponses"] = answers
		delete(p, "requestState")
		if r.RequestState != "" {
			p["requestState"] = r.RequestState
		}
		res, err := s.request(ctx, "tools/call", p)
		if err != nil {
			if ctx.Err() == nil {
				s.respondError(id, jsonrpc.CodeInternalError, "hitl gate: the upstream failed the call again with the answers: "+err.Error())
			}
			return
		}
		next, ok := s.answersInHitl(res)
		if !ok {
			if err := s.client.Write(ctx, &jsonrpc.Response{ID: id, Result: res}); err != nil && ctx.Err() == nil {
				s.g.log.Warn("mcp gate: cannot answer the client", "error", err)
			}
			return
		}
		r = next
	}
	s.respond(id, errorResult("hitl gate: the upstream server kept asking for input; the call was given up"))
}

// noteCall records the params of a tools/call relayed to the upstream,
// to call again with answers.
func (s *session) noteCall(req *jsonrpc.Request) {
	if req.Method != "tools/call" || !req.IsCall() {
		return
	}
	s.mu.Lock()
	s.calls[req.ID.Raw()] = req.Params
	s.mu.Unlock()
}

// callResult handles the upstream's result of a relayed tools/call, and
// reports whether the gate answers its input requests (false: relay it).
func (s *session) callResult(res *jsonrpc.Response) bool {
	if !res.ID.IsValid() {
		return false
	}
	s.mu.Lock()
	params, ok := s.calls[res.ID.Raw()]
	delete(s.calls, res.ID.Raw())
	s.mu.Unlock()
	if !ok || res.Error != nil {
		return false
	}
	r, mine := s.answersInHitl(res.Result)
	if !mine {
		return false
	}
	s.wg.Add(1)
	go s.completeCall(res.ID, params, r)
	return true
}
