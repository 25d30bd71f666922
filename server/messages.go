package server

import (
	"encoding/json"
	"time"

	"github.com/hitl-sh/hitl"
)

// Live stream message types (second seed §1.1, §1.2, plus hitl:resolved).
const (
	msgQuestion = "hitl:question"
	msgCancel   = "hitl:cancel"
	msgResolved = "hitl:resolved"
)

// questionMessage is the second seed's hitl:question, field for field.
type questionMessage struct {
	Type            string          `json:"type"`
	InteractionID   string          `json:"interaction_id"`
	InteractionType hitl.Type       `json:"interaction_type"`
	Question        string          `json:"question"`
	Context         *string         `json:"context"`
	Options         []optionMessage `json:"options"`
	FormSchema      json.RawMessage `json:"form_schema"`
	DefaultResponse json.RawMessage `json:"default_response"`
	Timeout         float64         `json:"timeout"`
	SourceAgent     string          `json:"source_agent"`
	Deadline        string          `json:"deadline"`
	CreatedAt       string          `json:"created_at"`
}

// optionMessage is an option with description null when absent, as the
// seed shows.
type optionMessage struct {
	Key         string  `json:"key"`
	Label       string  `json:"label"`
	Description *string `json:"description"`
}

// cancelMessage is the second seed's hitl:cancel.
type cancelMessage struct {
	Type          string `json:"type"`
	InteractionID string `json:"interaction_id"`
	Reason        string `json:"reason"`
}

// resolvedMessage tells every open client that an interaction was
// answered, by whom and through which channel.
type resolvedMessage struct {
	Type          string `json:"type"`
	InteractionID string `json:"interaction_id"`
	Status        string `json:"status"`
	RespondedBy   string `json:"responded_by"`
	Channel       string `json:"channel"`
	TimedOut      bool   `json:"timed_out,omitempty"`
}

// jsonNull is the JSON null literal, for fields the seed always sends.
var jsonNull = json.RawMessage("null")

// seedTime formats t as ISO-8601 UTC with a Z, as the seed's deadline.
func seedTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// newQuestionMessage renders a pending interaction as hitl:question.
func newQuestionMessage(in *hitl.Interaction) questionMessage {
	m := questionMessage{
		Type:            msgQuestion,
		InteractionID:   in.ID,
		InteractionType: in.Type,
		Question:        in.Question,
		Options:         make([]optionMessage, 0, len(in.Options)),
		FormSchema:      in.FormSchema,
		DefaultResponse: in.DefaultResponse,
		Timeout:         in.Timeout,
		SourceAgent:     in.SourceAgent,
		Deadline:        seedTime(in.Deadline),
		CreatedAt:       seedTime(in.CreatedAt),
	}
	if in.Context != "" {
		m.Context = &in.Context
	}
	for _, o := range in.Options {
		om := optionMessage{Key: o.Key, Label: o.Label}
		if o.Description != "" {
			d := o.Description
			om.Description = &d
		}
		m.Options = append(m.Options, om)
	}
	if len(m.FormSchema) == 0 {
		m.FormSchema = jsonNull
	}
	if len(m.DefaultResponse) == 0 {
		m.DefaultResponse = jsonNull
	}
	return m
}

// messageFor renders an event as the live stream message a client sees, or
// returns false for events clients are not told about.
func messageFor(ev *hitl.Event) (any, bool) {
	in := ev.Interaction
	if in == nil {
		return nil, false
	}
	switch ev.Type {
	case hitl.EventCreated:
		return newQuestionMessage(in), true
	case hitl.EventExpired:
		return cancelMessage{Type: msgCancel, InteractionID: in.ID, Reason: "timeout"}, true
	case hitl.EventCancelled:
		reason := ev.Detail
		if reason == "" {
			reason = "agent_cancelled"
		}
		return cancelMessage{Type: msgCancel, InteractionID: in.ID, Reason: reason}, true
	case hitl.EventAnswered:
		m := resolvedMessage{Type: msgResolved, InteractionID: in.ID, Status: string(hitl.StatusAnswered), RespondedBy: ev.Actor, Channel: ev.Channel}
		if in.Result != nil {
			m.TimedOut = in.Result.TimedOut
		}
		return m, true
	}
	return nil, false
}
