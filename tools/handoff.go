package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
)

// HandoffName is the handoff tool's name.
const HandoffName = "handoff_to_human"

// MaxHandoffTimeout bounds handoff_to_human's timeout: a person may take
// the conversation up days later, as far as the server allows.
const MaxHandoffTimeout = 30 * 86400

// Handoff returns the handoff_to_human tool: the agent gives the
// conversation to a person and stops. The call returns at once with the
// handoff's id; the person's reply resumes the agent, through whatever
// orchestrates it (which waits for the reply, GET …/wait).
func Handoff() Tool {
	return Tool{
		Name:         HandoffName,
		Title:        "Hand the conversation to a person",
		Description:  handoffDescription,
		InputSchema:  json.RawMessage(handoffInput),
		OutputSchema: json.RawMessage(handoffOutput),
	}
}

// HandoffArgs are the arguments of a handoff_to_human call.
type HandoffArgs struct {
	Message   string  `json:"message"`
	Context   string  `json:"context,omitempty"`
	SessionID string  `json:"session_id,omitempty"`
	Timeout   Seconds `json:"timeout,omitempty"`
	UniqueID  string  `json:"unique_id,omitempty"`
}

// Request validates the arguments and returns the handoff they make.
// Errors have code hitl.EINVALID and a message for the model; the engine
// checks the rest.
func (a HandoffArgs) Request() (hitl.CreateRequest, error) {
	r := hitl.HandoffRequest{
		Message:        a.Message,
		Context:        a.Context,
		SessionID:      strings.TrimSpace(a.SessionID),
		Timeout:        float64(a.Timeout),
		IdempotencyKey: strings.TrimSpace(a.UniqueID),
	}
	req := r.CreateRequest()
	if strings.TrimSpace(a.Message) == "" {
		return req, hitl.Errorf(hitl.EINVALID, "message is required: tell the person why you hand the conversation over and what they need to do")
	}
	if t := req.Timeout; t != 0 && (t < MinAskTimeout || t > MaxHandoffTimeout) {
		return req, hitl.Errorf(hitl.EINVALID, "timeout must be between %d and %d seconds; got %s", MinAskTimeout, MaxHandoffTimeout, formatSeconds(t))
	}
	return req, nil
}

// HandoffOutcome is handoff_to_human's structured result.
type HandoffOutcome struct {
	InteractionID string      `json:"interaction_id"`
	Status        hitl.Status `json:"status"`
	Deadline      string      `json:"deadline"`
}

// callHandoff makes the handoff and returns at once, without waiting for
// the reply. Cancelling ctx during the create leaves nothing pending (see
// ask.Create).
func callHandoff(ctx context.Context, svc hitl.Service, req hitl.CreateRequest) *Result {
	in, err := ask.Create(ctx, svc, req)
	if err != nil {
		return failure(HandoffName, in, err)
	}
	text := fmt.Sprintf("Handed the conversation to a person (handoff %s). Stop here: end your turn with a short message saying a person will take over. Do not call more tools for this conversation; the person's reply resumes it.", in.ID)
	return &Result{
		Text:          text,
		Interaction:   in,
		HandoffResult: &HandoffOutcome{InteractionID: in.ID, Status: in.Status, Deadline: in.Deadline.UTC().Format("2006-01-02T15:04:05.000Z")},
	}
}

const handoffDescription = `Hand this conversation to a person and stop. Use it when the user asks for a human, when you cannot or must not go on (a refund, a complaint, a decision outside your remit), or when you are stuck after trying.

A person sees message (and context) in their hitl inbox, and in the user's chat window if it speaks the hitl protocol, and replies in their own words. The call returns at once with the handoff's id: it does not wait. After it, end your turn with a short message telling the user a person will take over, and do nothing more in this conversation. The person's reply resumes the conversation later.

Put everything the person needs in context: what the user wants, what you did, what you found, and why you stopped.`

const handoffInput = `{
  "type": "object",
  "properties": {
    "message": {
      "type": "string",
      "minLength": 1,
      "description": "Your message to the person taking over: why you hand the conversation over and what they need to do."
    },
    "context": {
      "type": "string",
      "description": "What the person needs to know (Markdown): what the user wants, what you did and found, the conversation so far in brief."
    },
    "session_id": {
      "type": "string",
      "maxLength": 200,
      "description": "The conversation being handed over, when you know its id."
    },
    "timeout": {
      "type": "number",
      "minimum": 1,
      "maximum": 2592000,
      "description": "Seconds a reply is awaited (default: the server's, one hour)."
    },
    "unique_id": {
      "type": "string",
      "maxLength": 200,
      "description": "Optional: reuse only to retry the very same handoff, which then is not made twice."
    }
  },
  "required": ["message"],
  "additionalProperties": false
}`

const handoffOutput = `{
  "type": "object",
  "properties": {
    "interaction_id": {"type": "string", "description": "The handoff's id; the person's reply is its answer."},
    "status": {"type": "string", "description": "pending: nobody has replied yet."},
    "deadline": {"type": "string", "format": "date-time", "description": "Until when a reply is awaited."}
  },
  "required": ["interaction_id", "status", "deadline"]
}`
