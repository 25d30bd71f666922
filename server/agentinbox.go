package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
)

// LangChain Agent Inbox's interrupt contract (docs/contracts/agent-inbox.md):
// a LangGraph node's HumanInterrupt becomes an action, and the person's
// decision comes back as the HumanResponse list the node resumes with, so
// a graph in any language asks hitl with one HTTP call.

// maxInterrupts bounds the HumanInterrupts of one request.
const maxInterrupts = 100

// humanInterrupt is the contract's HumanInterrupt.
type humanInterrupt struct {
	ActionRequest *inboxActionRequest `json:"action_request"`
	Config        *interruptConfig    `json:"config"`
	Description   string              `json:"description"`
}

// inboxActionRequest is the contract's ActionRequest: the action's name
// (or title) and its arguments.
type inboxActionRequest struct {
	Action string          `json:"action"`
	Args   json.RawMessage `json:"args"`
}

// interruptConfig is the contract's HumanInterruptConfig: what the person
// may do.
type interruptConfig struct {
	AllowIgnore  bool `json:"allow_ignore"`
	AllowRespond bool `json:"allow_respond"`
	AllowEdit    bool `json:"allow_edit"`
	AllowAccept  bool `json:"allow_accept"`
}

// humanResponse is the contract's HumanResponse.
type humanResponse struct {
	Type string `json:"type"` // accept, edit, response or ignore
	// Args is the ActionRequest to run (accept, edit), the person's text
	// (response), or null (ignore).
	Args any `json:"args"`
}

// inboxState is what both routes return: where the interrupts stand, and
// once every one is answered, the HumanResponse list, one per interrupt
// in order.
type inboxState struct {
	// Status is pending while any interaction is, answered once all are,
	// else the status of the first that ended unanswered.
	Status         hitl.Status     `json:"status"`
	InteractionIDs []string        `json:"interaction_ids"`
	Responses      []humanResponse `json:"responses"`
	// Reason is why the first unanswered one expired or was cancelled.
	Reason string `json:"reason,omitempty"`
}

// handleInboxCreate serves POST /api/v1/agent-inbox/interrupts: the body
// is a HumanInterrupt or a list of them, each asked as an action; the
// query sets timeout, source_agent, session_id and idempotency_key (a
// list's i-th interrupt gets key "<key>#<i>"), and wait=S holds the
// request up to S seconds for the answers. 201 when any interaction was
// created, 200 when an idempotent repeat found them all.
func (s *Server) handleInboxCreate(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	wait, err := waitParam(q.Get("wait"))
	if err != nil {
		return err
	}
	base, err := inboxBase(q.Get("timeout"), q.Get("source_agent"), q.Get("session_id"))
	if err != nil {
		return err
	}
	interrupts, list, err := decodeInterrupts(w, r)
	if err != nil {
		return err
	}
	reqs := make([]hitl.CreateRequest, len(interrupts))
	for i, hi := range interrupts {
		at := "interrupt"
		if list {
			at = "interrupts[" + strconv.Itoa(i) + "]"
		}
		if reqs[i], err = hi.request(base, at); err != nil {
			return err
		}
		if key := q.Get("idempotency_key"); key != "" && list {
			reqs[i].IdempotencyKey = key + "#" + strconv.Itoa(i)
		} else {
			reqs[i].IdempotencyKey = key
		}
	}
	ids := make([]string, len(reqs))
	status := http.StatusOK
	for i, req := range reqs {
		in, created, err := s.broker.Create(r.Context(), req)
		if err != nil {
			return err
		}
		ids[i] = in.ID
		if created {
			status = http.StatusCreated
		}
	}
	return s.writeInboxState(w, r, status, ids, wait)
}

// handleInboxGet serves GET /api/v1/agent-inbox/interrupts/{ids}?wait=S:
// ids is an interaction id, or several joined by commas (a POST's
// interaction_ids), each an action.
func (s *Server) handleInboxGet(w http.ResponseWriter, r *http.Request) error {
	wait, err := waitParam(r.URL.Query().Get("wait"))
	if err != nil {
		return err
	}
	ids := strings.Split(r.PathValue("ids"), ",")
	if len(ids) > maxInterrupts {
		return hitl.Errorf(hitl.EINVALID, "at most %d interaction ids at once", maxInterrupts)
	}
	return s.writeInboxState(w, r, http.StatusOK, ids, wait)
}

// writeInboxState waits up to wait for the interactions ids to end and
// writes where they stand.
func (s *Server) writeInboxState(w http.ResponseWriter, r *http.Request, status int, ids []string, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	ins := make([]*hitl.Interaction, len(ids))
	for i, id := range ids {
		in, err := s.broker.Wait(ctx, id)
		switch {
		case errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil,
			errors.Is(err, broker.ErrClosed):
			// Still pending: reported as such.
		case err != nil:
			return err
		}
		if in.Type != hitl.TypeAction || in.Action == nil {
			return hitl.Errorf(hitl.EINVALID, "interaction %s is a %s question, not an action an Agent Inbox interrupt asked", in.ID, in.Type)
		}
		ins[i] = in
	}
	writeJSON(w, status, inboxStateOf(ins))
	return nil
}

// inboxStateOf returns where the interactions stand.
func inboxStateOf(ins []*hitl.Interaction) inboxState {
	st := inboxState{Status: hitl.StatusAnswered, InteractionIDs: make([]string, len(ins))}
	for i, in := range ins {
		st.InteractionIDs[i] = in.ID
		switch {
		case in.Status == hitl.StatusPending:
			st.Status, st.Reason = hitl.StatusPending, ""
		case in.Status != hitl.StatusAnswered && st.Status == hitl.StatusAnswered:
			st.Status = in.Status
			if in.Result != nil {
				st.Reason = in.Result.Reason
			}
		}
	}
	if st.Status != hitl.StatusAnswered {
		return st
	}
	st.Responses = make([]humanResponse, len(ins))
	for i, in := range ins {
		st.Responses[i] = responseOf(in)
	}
	return st
}

// responseOf is the HumanResponse of an answered action: approve is
// accept with the action as proposed, edit is edit with the person's
// arguments, respond is response with their text, and reject is ignore
// (the contract's ignore carries no text: a reject's reason stays in
// hitl's record of the answer).
func responseOf(in *hitl.Interaction) humanResponse {
	var v struct {
		Decision hitl.Decision   `json:"decision"`
		Args     json.RawMessage `json:"args"`
		Message  string          `json:"message"`
	}
	_ = json.Unmarshal(in.Result.Value, &v) // validated when it was recorded
	switch v.Decision {
	case hitl.DecisionApprove:
		return humanResponse{Type: "accept", Args: inboxActionRequest{Action: in.Action.Name, Args: in.Action.Args}}
	case hitl.DecisionEdit:
		return humanResponse{Type: "edit", Args: inboxActionRequest{Action: in.Action.Name, Args: v.Args}}
	case hitl.DecisionRespond:
		return humanResponse{Type: "response", Args: v.Message}
	}
	return humanResponse{Type: "ignore", Args: nil}
}

// request returns the action that asks hi, on top of base; at names hi in
// errors.
func (hi *humanInterrupt) request(base hitl.CreateRequest, at string) (hitl.CreateRequest, error) {
	req := base
	switch {
	case hi.ActionRequest == nil:
		return req, hitl.Errorf(hitl.EINVALID, "%s.action_request is required: {\"action\": …, \"args\": {…}}", at)
	case strings.TrimSpace(hi.ActionRequest.Action) == "":
		return req, hitl.Errorf(hitl.EINVALID, "%s.action_request.action is required", at)
	case hi.Config == nil:
		return req, hitl.Errorf(hitl.EINVALID, "%s.config is required: {\"allow_accept\", \"allow_edit\", \"allow_respond\", \"allow_ignore\"}", at)
	}
	args := bytes.TrimSpace(hi.ActionRequest.Args)
	if len(args) > 0 && args[0] != '{' && !bytes.Equal(args, []byte("null")) {
		return req, hitl.Errorf(hitl.EINVALID, "%s.action_request.args must be a JSON object", at)
	}
	c := hi.Config
	for _, d := range []struct {
		allowed  bool
		decision hitl.Decision
	}{{c.AllowAccept, hitl.DecisionApprove}, {c.AllowEdit, hitl.DecisionEdit}, {c.AllowIgnore, hitl.DecisionReject}, {c.AllowRespond, hitl.DecisionRespond}} {
		if d.allowed {
			req.Decisions = append(req.Decisions, d.decision)
		}
	}
	if len(req.Decisions) == 0 {
		return req, hitl.Errorf(hitl.EINVALID, "%s.config allows nothing: set at least one of allow_accept, allow_edit, allow_respond and allow_ignore", at)
	}
	req.Action = &hitl.Action{Name: hi.ActionRequest.Action, Args: hi.ActionRequest.Args}
	req.Context = hi.Description
	return req, nil
}

// decodeInterrupts reads the body: one HumanInterrupt (list false), or a
// list of 1 to maxInterrupts.
func decodeInterrupts(w http.ResponseWriter, r *http.Request) ([]humanInterrupt, bool, error) {
	data, err := readBody(w, r)
	if err != nil {
		return nil, false, err
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, false, hitl.Errorf(hitl.EINVALID, "%s", errEmptyBody)
	}
	if data[0] != '[' {
		var hi humanInterrupt
		if err := unmarshalBody(data, &hi); err != nil {
			return nil, false, err
		}
		return []humanInterrupt{hi}, false, nil
	}
	var his []humanInterrupt
	if err := unmarshalBody(data, &his); err != nil {
		return nil, true, err
	}
	if len(his) == 0 || len(his) > maxInterrupts {
		return nil, true, hitl.Errorf(hitl.EINVALID, "the body must be a HumanInterrupt or a list of 1 to %d of them", maxInterrupts)
	}
	return his, true, nil
}

// inboxBase is the create request every interrupt of a POST starts from:
// an action with the query's timeout, source_agent and session_id.
func inboxBase(timeout, agent, session string) (hitl.CreateRequest, error) {
	req := hitl.CreateRequest{Type: hitl.TypeAction, SourceAgent: agent, SessionID: session}
	if timeout != "" {
		secs, err := strconv.ParseFloat(timeout, 64)
		if err != nil || secs <= 0 || math.IsInf(secs, 0) || math.IsNaN(secs) {
			return req, hitl.Errorf(hitl.EINVALID, "timeout must be a positive number of seconds")
		}
		req.Timeout = secs
	}
	return req, nil
}

// waitParam parses wait=S: seconds to hold the request, 0 by default, at
// most maxWait.
func waitParam(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	secs, err := strconv.ParseFloat(v, 64)
	if err != nil || secs < 0 || math.IsNaN(secs) || math.IsInf(secs, 0) {
		return 0, hitl.Errorf(hitl.EINVALID, "wait must be a number of seconds between 0 and %d", int(maxWait.Seconds()))
	}
	return min(time.Duration(secs*float64(time.Second)), maxWait), nil
}
