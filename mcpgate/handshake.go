package mcpgate

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The gate reads a little of the session as it passes: who the client
// is and whether it can elicit (its initialize request), the upstream's
// name (the initialize result), and the upstream's tools with their
// descriptions and annotations (tools/list results).

// noteInitialize reads the client's initialize request and, when the
// gate itself answers elicitations the client cannot, declares
// elicitation support to the upstream in the client's place.
func (s *session) noteInitialize(req *jsonrpc.Request) {
	var p struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
		ClientInfo   struct {
			Name  string `json:"name"`
			Title string `json:"title"`
		} `json:"clientInfo"`
	}
	if decode(req.Params, &p) != nil {
		return
	}
	sup := readElicitSupport(p.Capabilities["elicitation"])
	s.mu.Lock()
	s.clientName, s.clientTitle = strings.TrimSpace(p.ClientInfo.Name), strings.TrimSpace(p.ClientInfo.Title)
	s.elicits = sup
	if req.IsCall() {
		s.initID = req.ID.Raw()
	}
	s.mu.Unlock()
	if s.g.opts.Elicit == ElicitClient || sup.form && sup.url {
		return
	}
	var params map[string]json.RawMessage
	if decode(req.Params, &params) != nil {
		return
	}
	caps := map[string]json.RawMessage{}
	_ = decode(params["capabilities"], &caps)
	caps["elicitation"] = json.RawMessage(`{"form":{},"url":{}}`)
	if b, err := json.Marshal(caps); err == nil {
		params["capabilities"] = b
		if b, err := json.Marshal(params); err == nil {
			req.Params = b
		}
	}
}

// noteResponse reads the upstream's answers to the client's initialize
// and tools/list requests.
func (s *session) noteResponse(res *jsonrpc.Response) {
	if res.Error != nil || !res.ID.IsValid() {
		return
	}
	id := res.ID.Raw()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.initID != nil && id == s.initID:
		s.initID = nil
		var r struct {
			ServerInfo struct {
				Name string `json:"name"`
			} `json:"serverInfo"`
		}
		if decode(res.Result, &r) == nil && s.server == "" {
			s.server = strings.TrimSpace(r.ServerInfo.Name)
		}
	case s.listing[id]:
		delete(s.listing, id)
		var r struct {
			Tools []*toolInfo `json:"tools"`
		}
		if decode(res.Result, &r) != nil {
			return
		}
		for _, t := range r.Tools {
			if t != nil && t.Name != "" {
				s.tools[t.Name] = t
			}
		}
	}
}

// agent is the source agent of the session's questions. The caller holds
// s.mu.
func (s *session) agent() string {
	switch {
	case s.g.opts.Agent != "":
		return s.g.opts.Agent
	case s.clientName != "":
		return s.clientName
	}
	return DefaultAgent
}

// clientShown names the client for the person. The caller holds s.mu.
func (s *session) clientShown() string {
	name := s.clientTitle
	if name == "" {
		name = s.clientName
	}
	if name == "" {
		name = "An MCP client"
	}
	return name + " (through hitl gate)"
}

// decode unmarshals JSON params or results.
func decode(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	return json.Unmarshal(raw, v)
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}

// newResponse returns the response to id carrying result.
func newResponse(id jsonrpc.ID, result any) (*jsonrpc.Response, error) {
	b, err := json.Marshal(result)
	if err != nil {
		return nil, err
	}
	return &jsonrpc.Response{ID: id, Result: b}, nil
}
