package server

import "github.com/hitl-sh/hitl"

// msgHandoff is a handoff's message on the live streams: the agent gave
// the conversation to a person, whose next message resumes it. It is
// never a hitl:question, so a frontend that knows only the AI-Parrot
// contract's types shows no prompt for it; it ends, as every question
// does, with hitl:resolved and hitl:cancel.
const msgHandoff = "hitl:handoff"

// handoffMessage is hitl:handoff: the agent's message, what it knows, and
// until when a reply is awaited. A reply is sent as any answer is (the
// contract's respond route, or the native one) with the reply as value.
type handoffMessage struct {
	Type            string    `json:"type"`
	InteractionID   string    `json:"interaction_id"`
	InteractionType hitl.Type `json:"interaction_type"`
	SessionID       *string   `json:"session_id"`
	Message         string    `json:"message"`
	Context         *string   `json:"context"`
	SourceAgent     string    `json:"source_agent"`
	Timeout         float64   `json:"timeout"`
	Deadline        string    `json:"deadline"`
	CreatedAt       string    `json:"created_at"`
	// Consensus, votes and claim, only when the handoff has them.
	workflowFields
}

// newHandoffMessage renders a pending handoff as hitl:handoff.
func newHandoffMessage(in *hitl.Interaction) handoffMessage {
	m := handoffMessage{
		Type:            msgHandoff,
		InteractionID:   in.ID,
		InteractionType: in.Type,
		Message:         in.Question,
		SourceAgent:     in.SourceAgent,
		Timeout:         in.Timeout,
		Deadline:        contractTime(in.Deadline),
		CreatedAt:       contractTime(in.CreatedAt),
		workflowFields:  newWorkflowFields(in),
	}
	if in.SessionID != "" {
		m.SessionID = &in.SessionID
	}
	if in.Context != "" {
		m.Context = &in.Context
	}
	return m
}

// pendingMessage renders a pending interaction as the message that shows
// it: hitl:handoff for a handoff, hitl:question for every other type.
func pendingMessage(in *hitl.Interaction) (typ string, msg any) {
	if in.Type == hitl.TypeHandoff {
		return msgHandoff, newHandoffMessage(in)
	}
	return msgQuestion, newQuestionMessage(in)
}

// pendingType is the type of pendingMessage(in).
func pendingType(in *hitl.Interaction) string {
	if in.Type == hitl.TypeHandoff {
		return msgHandoff
	}
	return msgQuestion
}
