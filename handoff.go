package hitl

import (
	"encoding/json"
	"strings"
	"time"
)

// TypeHandoff is an agent giving its conversation to a person: there is no
// structured question, only the agent's message (Question) and what it
// knows (Context); the answer is the person's reply, a non-empty string,
// which resumes the agent.
const TypeHandoff Type = "handoff"

// normalizeHandoff validates v, a decoded answer to a handoff: a string
// with something in it besides white space, at most MaxFreeTextLen bytes.
// A reply is text a person wrote, so numbers and booleans are refused
// rather than read as text (free_text's leniency is for older clients
// that answer questions; no client predates handoffs).
func normalizeHandoff(v any) (json.RawMessage, error) {
	s, ok := v.(string)
	if !ok {
		return nil, Errorf(EVALUE, "a handoff's reply must be a string")
	}
	if strings.TrimSpace(s) == "" {
		return nil, Errorf(EVALUE, "a handoff's reply must not be empty")
	}
	if len(s) > MaxFreeTextLen {
		return nil, Errorf(EVALUE, "a handoff's reply is limited to %d bytes", MaxFreeTextLen)
	}
	return json.Marshal(s)
}

// HandoffRequest is what an agent sends to give its conversation to a
// person: the surfaces that hand off (the Go client, the MCP tool, the
// CLI) take it, and send it as the CreateRequest it stands for.
type HandoffRequest struct {
	// Message is the agent's message to the person: why it hands off and
	// what it needs. Required.
	Message string `json:"message"`
	// Context is what the agent knows that the person will need
	// (Markdown): the conversation so far, a summary, links.
	Context string `json:"context,omitempty"`
	// SessionID names the conversation handed over, so a chat frontend
	// shows the handoff in it.
	SessionID   string `json:"session_id,omitempty"`
	SourceAgent string `json:"source_agent,omitempty"`
	// Timeout is how long, in seconds, a reply is awaited (0: the
	// server's default); Deadline, when set, wins.
	Timeout  float64    `json:"timeout,omitempty"`
	Deadline *time.Time `json:"deadline,omitempty"`
	// Targets are who may take the conversation; nil means anyone.
	Targets *Targets `json:"targets,omitempty"`
	// ClaimMode "exclusive" lets one person take the conversation and
	// refuses the others' replies while they hold it.
	ClaimMode      ClaimMode      `json:"claim,omitempty"`
	IdempotencyKey string         `json:"idempotency_key,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
	Notify         *Notify        `json:"notify,omitempty"`
	CallbackURL    string         `json:"callback_url,omitempty"`
}

// CreateRequest returns the request that creates the handoff.
func (r HandoffRequest) CreateRequest() CreateRequest {
	return CreateRequest{
		Type:           TypeHandoff,
		Question:       r.Message,
		Context:        r.Context,
		SessionID:      r.SessionID,
		SourceAgent:    r.SourceAgent,
		Timeout:        r.Timeout,
		Deadline:       r.Deadline,
		Targets:        r.Targets,
		ClaimMode:      r.ClaimMode,
		IdempotencyKey: r.IdempotencyKey,
		Metadata:       r.Metadata,
		Notify:         r.Notify,
		CallbackURL:    r.CallbackURL,
	}
}

// HandoffReply returns the reply that ended the handoff in: the person's
// text, or for a handoff that ended otherwise the error Outcome-style
// callers expect (EEXPIRED when nobody replied in time, ECANCELLED when it
// was withdrawn). A pending handoff is ECONFLICT.
func HandoffReply(in *Interaction) (string, error) {
	switch {
	case in.Type != TypeHandoff:
		return "", Errorf(EINVALID, "interaction %s is a %s, not a handoff", in.ID, in.Type)
	case in.Status == StatusPending:
		return "", Errorf(ECONFLICT, "handoff %s is still pending", in.ID)
	case in.Status == StatusExpired:
		return "", Errorf(EEXPIRED, "nobody replied to handoff %s before its deadline (%s)", in.ID, in.Deadline.Format(time.RFC3339))
	case in.Status == StatusCancelled:
		reason := "no reason given"
		if in.Result != nil && in.Result.Reason != "" {
			reason = in.Result.Reason
		}
		return "", Errorf(ECANCELLED, "handoff %s was cancelled: %s", in.ID, reason)
	}
	var s string
	if in.Result == nil || json.Unmarshal(in.Result.Value, &s) != nil {
		return "", Errorf(EINTERNAL, "handoff %s is answered without a reply", in.ID)
	}
	return s, nil
}
