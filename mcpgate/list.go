package mcpgate

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// listTimeout bounds the gate's own tools/list; a call whose tool stays
// unknown is gated.
const listTimeout = 30 * time.Second

// ownPrefix begins the ids of the gate's own requests to the upstream,
// whose responses it keeps from the client.
const ownPrefix = "hitl-gate-"

// listTools asks the upstream for its tools (every page) and notes them.
func (s *session) listTools() {
	ctx, cancel := context.WithTimeout(s.ctx, listTimeout)
	defer cancel()
	cursor := ""
	for page := 0; page < 100; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		res, err := s.request(ctx, "tools/list", params)
		if err != nil {
			s.g.log.Warn("mcp gate: cannot list the upstream's tools", "error", err)
			return
		}
		var r struct {
			Tools      []*toolInfo `json:"tools"`
			NextCursor string      `json:"nextCursor"`
		}
		if decode(res, &r) != nil {
			return
		}
		s.noteTools(r.Tools)
		if r.NextCursor == "" {
			return
		}
		cursor = r.NextCursor
	}
}

// request sends the upstream a request of the gate's own and waits for
// its result.
func (s *session) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	ch := make(chan *jsonrpc.Response, 1)
	s.mu.Lock()
	s.ownSeq++
	key := fmt.Sprintf("%s%d", ownPrefix, s.ownSeq)
	s.own[key] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.own, key)
		s.mu.Unlock()
	}()
	id, err := jsonrpc.MakeID(key)
	if err != nil {
		return nil, err
	}
	if err := s.upstream.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: b}); err != nil {
		return nil, err
	}
	select {
	case res := <-ch:
		if res.Error != nil {
			return nil, res.Error
		}
		return res.Result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ownResponse delivers a response to one of the gate's own requests,
// and reports whether it was one (false: relay it).
func (s *session) ownResponse(res *jsonrpc.Response) bool {
	key, ok := res.ID.Raw().(string)
	if !ok {
		return false
	}
	s.mu.Lock()
	ch, mine := s.own[key]
	s.mu.Unlock()
	if mine {
		ch <- res
	}
	return mine
}

// noteTools records what the upstream says about its tools.
func (s *session) noteTools(list []*toolInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range list {
		if t != nil && t.Name != "" {
			s.tools[t.Name] = t
		}
	}
}
