package ask

import (
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode"

	"github.com/hitl-sh/hitl"
)

// DefaultFeedbackTimeout is how long the human_feedback contract's
// helpers wait for an answer: ten minutes, as the contract's do.
const DefaultFeedbackTimeout = 10 * time.Minute

// Orchestrator has the human_feedback contract's orchestrator helpers
// (docs/contracts/human-feedback.md) with their names, parameters and
// results, so that Go code written against them runs unchanged over any
// hitl.Service, the in-process engine or a remote server:
//
//	orchestrator := ask.NewOrchestrator(svc)
//	approved, feedback, err := orchestrator.RequestHumanFeedback(ctx, "approval_123",
//		"Please approve this plan", "Additional context", sessionID, workflowID)
//
// The helpers map onto hitl's model the same way:
//   - id (the contract's unique_id) is the question's idempotency key:
//     asking again with it, after a crash say, waits on the same question
//     and gets its answer; "" makes a random one.
//   - details (the contract's context) is the question's context, shown
//     with it; sessionID is its session_id; workflowID goes into its
//     metadata as workflow_id (left out when "").
//   - Each waits Timeout (ten minutes unless set). A question that ends
//     without an answer is an error: errors.Is(err, hitl.ErrExpired)
//     ("timeout waiting for feedback: …") or hitl.ErrCancelled; cancelling
//     ctx withdraws it.
//
// The typed helpers (Text, YesNo, Choice, …) give more: option keys rather
// than labels, several choices, forms, deadlines.
type Orchestrator struct {
	// Service is what the questions go through.
	Service hitl.Service
	// Timeout is how long each question waits; 0 means
	// DefaultFeedbackTimeout.
	Timeout time.Duration
	// SourceAgent names the agent asking, shown to the person.
	SourceAgent string
}

// NewOrchestrator returns the contract's helpers over svc, with their
// ten-minute wait.
func NewOrchestrator(svc hitl.Service) *Orchestrator {
	return &Orchestrator{Service: svc}
}

// options returns the Options of a question (see Orchestrator).
func (o *Orchestrator) options(id, details, sessionID, workflowID string) *Options {
	opts := &Options{
		Context:        details,
		Timeout:        o.Timeout,
		IdempotencyKey: id,
		SourceAgent:    o.SourceAgent,
		SessionID:      sessionID,
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultFeedbackTimeout
	}
	if workflowID != "" {
		opts.Metadata = map[string]any{"workflow_id": workflowID}
	}
	return opts
}

// RequestHumanFeedback asks for a free-form review: the person types an
// answer. It returns the text (feedback), and approved: whether the text
// reads as an approval, that is, whether its first word is one hitl takes
// as "yes" for an approval — yes, y, ok, approve, approved, accept,
// confirm or true, in any case ("Yes, after 6 pm" is approved; "Not yet",
// "LGTM" are not).
func (o *Orchestrator) RequestHumanFeedback(ctx context.Context, id, question, details, sessionID, workflowID string) (approved bool, feedback string, err error) {
	feedback, err = Text(ctx, o.Service, question, o.options(id, details, sessionID, workflowID))
	if err != nil {
		return false, "", err
	}
	return ReadsAsApproval(feedback), feedback, nil
}

// RequestYesNoFeedback asks for an approval with two buttons, yesLabel and
// noLabel ("" for "Approve" and "Reject"), and reports whether the person
// chose yes.
func (o *Orchestrator) RequestYesNoFeedback(ctx context.Context, id, question, yesLabel, noLabel, details, sessionID, workflowID string) (bool, error) {
	return YesNo(ctx, o.Service, question, yesLabel, noLabel, o.options(id, details, sessionID, workflowID))
}

// RequestMultipleChoiceFeedback asks the person to pick one of options and
// returns the chosen option's text, as the contract's helper does (Choice
// returns its key and index instead).
func (o *Orchestrator) RequestMultipleChoiceFeedback(ctx context.Context, id, question string, options []string, details, sessionID, workflowID string) (string, error) {
	_, i, err := Choice(ctx, o.Service, question, options, o.options(id, details, sessionID, workflowID))
	if err != nil {
		return "", err
	}
	return options[i], nil
}

// ReadsAsApproval reports whether free text reads as an approval: its
// first word (letters and digits) is one the engine takes as "yes" for an
// approval question (see RequestHumanFeedback).
func ReadsAsApproval(text string) bool {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) == 0 {
		return false
	}
	word, err := json.Marshal(words[0])
	if err != nil {
		return false
	}
	v, err := hitl.NormalizeAnswer(&hitl.Interaction{Type: hitl.TypeApproval}, word)
	return err == nil && string(v) == "true"
}
