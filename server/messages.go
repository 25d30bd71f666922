package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/hitl-sh/hitl"
)

// Live stream message types: the AI-Parrot HITL contract's hitl:question
// (§1.1) and hitl:cancel (§1.2), plus hitl:resolved (who answered) and
// hitl:replay_done (the replay a connection starts with is complete).
const (
	msgQuestion   = "hitl:question"
	msgCancel     = "hitl:cancel"
	msgResolved   = "hitl:resolved"
	msgReplayDone = "hitl:replay_done"
)

// hitl:cancel reasons, besides the agent's own.
const (
	cancelTimeout  = "timeout"             // the deadline passed (expired, or answered with the default)
	cancelByAgent  = hitl.CancelledByAgent // the agent cancelled without a reason
	cancelAnswered = "answered"            // someone answered, on any channel
)

// questionMessage is the contract's hitl:question, field for field, plus
// created_at and session_id (when the interaction has one).
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
	SessionID       string          `json:"session_id,omitempty"`
	// Project is the directory the agent works in, when it said
	// (hitl.Interaction.Project).
	Project string `json:"project,omitempty"`
	// An action's fields, only on an action (args_schema null when it
	// has none); the other types' messages are the contract's exactly.
	Action                *hitl.Action    `json:"action,omitempty"`
	ArgsSchema            json.RawMessage `json:"args_schema,omitempty"`
	Decisions             []hitl.Decision `json:"decisions,omitempty"`
	RejectRequiresMessage *bool           `json:"reject_requires_message,omitempty"`
	Summary               string          `json:"summary,omitempty"` // hitl.Action.Summary
	// Consensus, votes and claim, only when the interaction has them.
	workflowFields
}

// optionMessage is an option with description null when absent, as the
// contract shows.
type optionMessage struct {
	Key         string  `json:"key"`
	Label       string  `json:"label"`
	Description *string `json:"description"`
}

// cancelMessage is the contract's hitl:cancel.
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

// jsonNull is the JSON null literal, for fields the contract always sends.
var jsonNull = json.RawMessage("null")

// contractTime formats t as ISO-8601 UTC with a Z, as the contract's deadline.
func contractTime(t time.Time) string {
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
		Deadline:        contractTime(in.Deadline),
		CreatedAt:       contractTime(in.CreatedAt),
		SessionID:       in.SessionID,
		Project:         in.Project(),
		workflowFields:  newWorkflowFields(in),
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
	if in.Type == hitl.TypeAction {
		m.Action, m.ArgsSchema, m.Decisions = in.Action, in.ArgsSchema, in.Decisions
		m.RejectRequiresMessage = &in.RejectRequiresMessage
		m.Summary = in.Action.Summary()
		if len(m.ArgsSchema) == 0 {
			m.ArgsSchema = jsonNull
		}
	}
	return m
}

// streamMessage is one encoded message of a live stream: its type (the
// SSE event name) and its JSON.
type streamMessage struct {
	typ  string
	data []byte
}

// eventMessages renders an event as the messages clients get, in order,
// each with the event's sequence number as "seq" (the resume point):
//
//   - created: hitl:question (hitl:handoff for a handoff, see
//     handoffmessage.go), unless a rule answered the action as it was
//     made (no person was ever asked: the answered event follows, and a
//     card shown for an instant would only flash);
//   - expired: hitl:cancel, reason timeout;
//   - cancelled: hitl:cancel with the agent's reason (agent_cancelled
//     when it gave none);
//   - answered: hitl:resolved, then hitl:cancel with reason answered (or
//     timeout when the deadline applied the default answer);
//   - voted, claimed, released, reminded: hitl:progress (see progress.go);
//   - escalated: hitl:question again (for the people it added, who had
//     not seen it; a client that shows it already ignores it), then
//     hitl:progress.
//
// Every way out of pending thus ends in a hitl:cancel, so a client that
// knows only the contract's two messages never keeps showing a question
// that is over; one that knows hitl:resolved has dismissed the question
// on it and ignores the cancel that follows. Other events (notified) give
// no message. For a created event, question is the hitl:question (or
// hitl:handoff) without seq, as replays send it.
func eventMessages(ev *hitl.Event) (msgs []streamMessage, question []byte, err error) {
	in := ev.Interaction
	if in == nil {
		return nil, nil, nil
	}
	add := func(typ string, msg any) error {
		data, err := marshalMessage(msg)
		if err != nil {
			return err
		}
		if typ == msgQuestion || typ == msgHandoff {
			question = data
		}
		msgs = append(msgs, streamMessage{typ: typ, data: appendSeq(data, ev.Seq)})
		return nil
	}
	cancel := func(reason string) error {
		return add(msgCancel, cancelMessage{Type: msgCancel, InteractionID: in.ID, Reason: reason})
	}
	switch ev.Type {
	case hitl.EventCreated:
		if in.Result == nil || in.Result.Channel != hitl.ChannelRule {
			err = add(pendingMessage(in))
		}
	case hitl.EventExpired:
		err = cancel(cancelTimeout)
	case hitl.EventCancelled:
		reason := ev.Detail
		if reason == "" {
			reason = cancelByAgent
		}
		err = cancel(reason)
	case hitl.EventVoted, hitl.EventClaimed, hitl.EventReleased, hitl.EventReminded:
		err = add(msgProgress, newProgressMessage(ev))
	case hitl.EventEscalated:
		if in.Status == hitl.StatusPending {
			err = add(pendingMessage(in))
		}
		if err == nil {
			err = add(msgProgress, newProgressMessage(ev))
		}
	case hitl.EventAnswered:
		m := resolvedMessage{Type: msgResolved, InteractionID: in.ID, Status: string(hitl.StatusAnswered), RespondedBy: ev.Actor, Channel: ev.Channel}
		reason := cancelAnswered
		if in.Result != nil && in.Result.TimedOut {
			m.TimedOut, reason = true, cancelTimeout
		}
		if err = add(msgResolved, m); err == nil {
			err = cancel(reason)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return msgs, question, nil
}

// appendSeq returns a copy of data, a JSON object, with "seq" added last.
func appendSeq(data []byte, seq int64) []byte {
	out := make([]byte, 0, len(data)+32)
	out = append(out, data[:len(data)-1]...)
	out = append(out, `,"seq":`...)
	out = strconv.AppendInt(out, seq, 10)
	return append(out, '}')
}

// replayDone returns hitl:replay_done, the message that ends the replay a
// connection starts with, in two pieces around pending (a JSON array of
// the pending interactions' ids, or nil after a resume, which sends none):
//
//	{"type":"hitl:replay_done","seq":N,"resumed":false,"pending":["…",…]}
//
// seq is the event log position the client is now complete up to (every
// later event follows live), the resume point for its next connection;
// resumed says whether the connection resumed from the point it gave, in
// which case it has been sent what it missed, or got a full replay, in
// which case anything it shows that is not in pending has ended.
func replayDone(seq int64, resumed bool, pending []byte) (head, tail []byte) {
	head = append([]byte(`{"type":"`+msgReplayDone+`","seq":`), strconv.FormatInt(seq, 10)...)
	head = append(head, `,"resumed":`...)
	head = strconv.AppendBool(head, resumed)
	if pending == nil {
		return head, []byte("}")
	}
	return append(head, `,"pending":`...), []byte("}")
}

// marshalMessage renders a stream message as compact JSON on one line,
// without HTML escaping (as the HTTP API writes JSON).
func marshalMessage(msg any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(msg); err != nil {
		return nil, fmt.Errorf("encode stream message: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// idsJSON encodes ids as a JSON array of strings.
func idsJSON(ids []string) []byte {
	if len(ids) == 0 {
		return []byte("[]")
	}
	var buf bytes.Buffer
	buf.Grow(len(ids) * 40)
	buf.WriteByte('[')
	for i, id := range ids {
		if i > 0 {
			buf.WriteByte(',')
		}
		b, _ := json.Marshal(id) // a string always encodes
		buf.Write(b)
	}
	buf.WriteByte(']')
	return buf.Bytes()
}
