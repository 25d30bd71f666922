package slack

import (
	"context"
	"encoding/json"

	"github.com/slack-go/slack/slackevents"
)

// outerEvent is the envelope of an Events API payload, over HTTP and
// Socket Mode alike.
type outerEvent struct {
	Type      string          `json:"type"`
	EventID   string          `json:"event_id"`
	Challenge string          `json:"challenge"`
	Event     json.RawMessage `json:"event"`
}

// firstDelivery reports whether the event with this ID is seen for the
// first time (Slack retries an event it thinks was not received). Any
// replica sharing the store sees the same answer. An event without an ID
// is always new; a store error counts as new, since the engine answers
// exactly once anyway.
func (s *Service) firstDelivery(ctx context.Context, eventID string) bool {
	if eventID == "" {
		return true
	}
	now := s.now()
	fresh, err := s.store.SeenSlackEvent(ctx, eventID, now, now.Add(-seenWindow))
	if err != nil {
		s.log.Error("record a Slack event ID", "error", err)
		return true
	}
	if !fresh {
		s.log.Debug("Slack event delivered again; ignored", "event_id", eventID)
	}
	return fresh
}

// callbackEvent handles the inner event of an event_callback: thread
// replies are the only events hitl listens to.
func (s *Service) callbackEvent(ctx context.Context, raw json.RawMessage) {
	var inner struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &inner) != nil || inner.Type != "message" {
		return
	}
	var ev slackevents.MessageEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		s.log.Warn("a Slack message event could not be read", "error", err)
		return
	}
	s.threadReply(ctx, &ev)
}
