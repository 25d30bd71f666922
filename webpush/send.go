package webpush

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	wp "github.com/SherClockHolmes/webpush-go"
	"github.com/hitl-sh/hitl"
)

// Payload is what a push carries to the browser's service worker, as
// JSON: enough to show a notification and open the card, nothing more (no
// context, options or values, which may be secret; push services accept
// about 4 KB).
type Payload struct {
	ID       string    `json:"id"`
	Type     hitl.Type `json:"type"`
	Question string    `json:"question"`
	Agent    string    `json:"agent,omitempty"`
	Deadline time.Time `json:"deadline,omitzero"`
	// URL is the card's detail view, relative to the inbox's origin.
	URL string `json:"url"`
}

// Lengths the payload's texts are cut to.
const (
	maxQuestion = 300
	maxAgent    = 80
)

// payloadFor returns in's payload.
func payloadFor(in *hitl.Interaction) Payload {
	return Payload{
		ID: in.ID, Type: in.Type, Question: cut(strings.TrimSpace(in.Headline()+"\n"+in.Subline()), maxQuestion),
		Agent: cut(in.SourceAgent, maxAgent), Deadline: in.Deadline, URL: "/i/" + in.ID,
	}
}

// cut shortens s to at most n runes, marking the cut with an ellipsis.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// outcome is what a push service's answer means for the row.
type outcome int

const (
	retry   outcome = iota // try again later (network, 429, 5xx)
	gone                   // the subscription no longer exists (404, 410)
	refused                // will not work however often it is tried (other 4xx)
)

// pushError is a failed push, with what it means.
type pushError struct {
	outcome outcome
	err     error
}

func (e *pushError) Error() string { return e.err.Error() }

// push sends in's payload to sub, encrypted for it and signed with keys.
// It returns nil once the push service accepted it, else a *pushError.
func (s *Service) push(ctx context.Context, keys vapidKeys, sub *hitl.PushSubscription, in *hitl.Interaction) error {
	body, err := json.Marshal(payloadFor(in))
	if err != nil {
		return &pushError{refused, err}
	}
	if err := s.checkScheme(sub.Endpoint); err != nil {
		return &pushError{refused, err}
	}
	ttl := time.Hour * 24
	if !in.Deadline.IsZero() {
		ttl = min(max(in.Deadline.Sub(s.now()), time.Minute), ttl)
	}
	resp, err := wp.SendNotificationWithContext(ctx, body, &wp.Subscription{
		Endpoint: sub.Endpoint, Keys: wp.Keys{P256dh: sub.P256DH, Auth: sub.Auth},
	}, &wp.Options{
		HTTPClient: s.client, Subscriber: s.subscriber(), TTL: int(ttl.Seconds()), Urgency: wp.UrgencyHigh,
		VAPIDPublicKey: keys.public, VAPIDPrivateKey: keys.private,
	})
	if err != nil {
		if errors.Is(err, wp.ErrMaxPadExceeded) {
			return &pushError{refused, err}
		}
		return &pushError{retry, err}
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return classify(resp.StatusCode)
}

// classify returns nil for a push service's success status, else what the
// failure means.
func classify(status int) error {
	err := fmt.Errorf("the push service answered %d %s", status, http.StatusText(status))
	switch {
	case status >= 200 && status < 300:
		return nil
	case status == http.StatusNotFound || status == http.StatusGone:
		return &pushError{gone, err}
	case status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500:
		return &pushError{retry, err}
	}
	return &pushError{refused, err}
}

// outcomeOf returns what err means for the row.
func outcomeOf(err error) outcome {
	var pe *pushError
	if errors.As(err, &pe) {
		return pe.outcome
	}
	return retry
}

// subscriber is the VAPID subject as webpush-go takes it: it prefixes
// "mailto:" to anything that is not an https URL, so a mailto: subject is
// given without its scheme.
func (s *Service) subscriber() string {
	return strings.TrimPrefix(s.subject, "mailto:")
}
