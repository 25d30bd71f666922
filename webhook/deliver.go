package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/standardwebhooks"
)

// workDue claims the deliveries due now and sends them, a few at a time.
func (s *Service) workDue(ctx context.Context) error {
	for {
		now := s.now()
		ds, err := s.store.ClaimWebhookDeliveries(ctx, now, now.Add(lease), claimBatch)
		if err != nil {
			return err
		}
		var wg sync.WaitGroup
		sem := make(chan struct{}, sendersPerClaim)
		for _, d := range ds {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				s.attempt(ctx, d)
			})
		}
		wg.Wait()
		if len(ds) < claimBatch || ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// attempt sends a claimed delivery once and records how it went: done,
// to be retried after a backoff, or given up after MaxAge.
func (s *Service) attempt(ctx context.Context, d *hitl.WebhookDelivery) {
	start := s.now()
	a := &hitl.WebhookAttempt{Attempt: d.Attempts, At: start}
	status, err := s.send(ctx, d)
	a.StatusCode, a.DurationMS = status, s.now().Sub(start).Milliseconds()
	next := *d
	switch {
	case err == nil:
		at := s.now()
		next.State, next.DueAt, next.DeliveredAt = hitl.DeliveryDelivered, time.Time{}, &at
	case ctx.Err() != nil:
		return // shutting down: the lease runs out and it is sent again
	default:
		a.Error = err.Error()
		retry := s.now().Add(s.backoff(d.Attempts))
		if retry.Sub(d.CreatedAt) > s.opts.MaxAge {
			next.State, next.DueAt = hitl.DeliveryFailed, time.Time{}
			s.log.Warn("webhook delivery failed for good", "delivery", d.ID, "interaction_id", d.InteractionID,
				"attempts", d.Attempts, "error", a.Error)
		} else {
			next.State, next.DueAt = hitl.DeliveryPending, retry
			s.log.Info("webhook delivery failed; will retry", "delivery", d.ID, "attempt", d.Attempts,
				"retry_at", retry, "error", a.Error)
		}
	}
	ok, err := s.store.RecordWebhookAttempt(ctx, &next, a, d.Attempts)
	switch {
	case err != nil && ctx.Err() == nil:
		s.log.Error("record webhook attempt", "delivery", d.ID, "error", err)
	case err == nil && !ok:
		s.log.Warn("webhook delivery was taken over after its lease ran out", "delivery", d.ID)
	}
}

// backoff returns the delay before the retry after attempt n (1 for the
// first): RetryBase doubled n-1 times, at most MaxRetryDelay, with "equal
// jitter" (between half of it and all of it), so that receivers coming
// back up are not hit by every retry at once.
func (s *Service) backoff(n int) time.Duration {
	d := s.opts.RetryBase
	for i := 1; i < n && d < s.opts.MaxRetryDelay; i++ {
		d *= 2
	}
	d = min(d, s.opts.MaxRetryDelay)
	return d/2 + rand.N(d/2+1)
}

// send POSTs d's body, signed, and returns the receiver's status; any
// status but 2xx is an error.
func (s *Service) send(ctx context.Context, d *hitl.WebhookDelivery) (int, error) {
	key, err := s.keyOf(d)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		return 0, fmt.Errorf("bad URL: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", s.opts.UserAgent)
	standardwebhooks.SetHeaders(req.Header, key, d.ID, s.now(), d.Body)
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, attemptError(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return resp.StatusCode, nil
}

// attemptError says why a request failed, without the URL (which may
// carry a token) when it is the refusal of a private address.
func attemptError(err error) error {
	if refusedAddr(err) {
		var e errRefusedAddr
		errors.As(err, &e)
		return e
	}
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

// keyOf returns the key d is signed with: its subscription's secret, or
// the server's for a callback.
func (s *Service) keyOf(d *hitl.WebhookDelivery) ([]byte, error) {
	if d.SubscriptionID == "" {
		if s.serverKey == nil {
			return nil, errors.New("no server webhook secret: set HITL_WEBHOOK_SECRET or HITL_SECRET_KEY")
		}
		return s.serverKey, nil
	}
	if s.opts.Sealer == nil {
		return nil, errNoSealer
	}
	secret, err := s.opts.Sealer.Open(sealField, d.Secret)
	if err != nil {
		return nil, err
	}
	return standardwebhooks.DecodeSecret(secret)
}
