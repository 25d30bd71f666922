package slack

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/slack-go/slack"
)

// Slack over HTTP: the Events API (thread replies) at /slack/events and
// interactivity (buttons, modals) at /slack/interactivity. Every request
// must carry Slack's v0 signature, an HMAC-SHA256 of "v0:{timestamp}:
// {body}" under the signing secret, made within the last five minutes;
// anything else gets 401 and a log line without the body.

const (
	// maxSkew is how far a request's timestamp may be from now.
	maxSkew = 5 * time.Minute
	// maxSlackBody bounds a request from Slack.
	maxSlackBody = 1 << 20
	// submissionTimeout bounds answering a modal over HTTP: Slack waits
	// three seconds for the response.
	submissionTimeout = 2500 * time.Millisecond
)

// Reasons a request is refused.
var (
	errNoSignature  = errors.New("missing X-Slack-Signature or X-Slack-Request-Timestamp")
	errStale        = errors.New("timestamp is more than five minutes from now")
	errBadSignature = errors.New("signature does not match")
)

// Verify checks Slack's v0 signature of a request body at now.
func Verify(h http.Header, body []byte, secret string, now time.Time) error {
	ts, sig := h.Get("X-Slack-Request-Timestamp"), h.Get("X-Slack-Signature")
	if ts == "" || sig == "" {
		return errNoSignature
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("timestamp %q is not a number", ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > maxSkew || d < -maxSkew {
		return errStale
	}
	if !hmac.Equal([]byte(sig), []byte(Sign(body, secret, ts))) {
		return errBadSignature
	}
	return nil
}

// Sign returns the X-Slack-Signature of body sent at timestamp ts (unix
// seconds), as Slack computes it.
func Sign(body []byte, secret, ts string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%s:", ts)
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// EventsHandler serves Slack's Events API (POST /slack/events): the URL
// verification challenge, and message events for thread replies. Retries
// of an event already received are acknowledged and ignored.
func (s *Service) EventsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := s.verified(w, r)
		if !ok {
			return
		}
		var outer outerEvent
		if err := json.Unmarshal(body, &outer); err != nil {
			http.Error(w, "malformed JSON", http.StatusBadRequest)
			return
		}
		switch outer.Type {
		case "url_verification":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"challenge": outer.Challenge})
			return
		case "event_callback":
			if cfg, _ := s.client(); !cfg.Enabled {
				break // acknowledged, and ignored while Slack is off
			}
			if n := r.Header.Get("X-Slack-Retry-Num"); n != "" {
				s.log.Debug("Slack retried an event", "event_id", outer.EventID, "retry", n, "reason", r.Header.Get("X-Slack-Retry-Reason"))
			}
			if s.firstDelivery(r.Context(), outer.EventID) {
				raw := outer.Event
				s.goHandle(func(ctx context.Context) { s.callbackEvent(ctx, raw) })
			}
		}
		w.WriteHeader(http.StatusOK)
	})
}

// InteractivityHandler serves Slack's interactivity requests (POST
// /slack/interactivity): clicks and selections are acknowledged at once
// and handled after; a modal's submission is answered in the response, so
// that errors show in the modal.
func (s *Service) InteractivityHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := s.verified(w, r)
		if !ok {
			return
		}
		form, err := url.ParseQuery(string(body))
		if err != nil || form.Get("payload") == "" {
			http.Error(w, "no payload", http.StatusBadRequest)
			return
		}
		var cb slack.InteractionCallback
		if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
			http.Error(w, "malformed payload", http.StatusBadRequest)
			return
		}
		if cfg, _ := s.client(); !cfg.Enabled {
			w.WriteHeader(http.StatusOK) // acknowledged, and ignored while Slack is off
			return
		}
		switch cb.Type {
		case slack.InteractionTypeViewSubmission:
			ctx, cancel := context.WithTimeout(r.Context(), submissionTimeout)
			defer cancel()
			if resp := s.viewSubmission(ctx, &cb); resp != nil {
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(resp)
				return
			}
		case slack.InteractionTypeBlockActions:
			s.goHandle(func(ctx context.Context) { s.blockActions(ctx, &cb) })
		}
		w.WriteHeader(http.StatusOK)
	})
}

// verified reads the body of a request from Slack and checks its
// signature; on failure it has written the response. A signing secret is
// enough (Slack on or not), so that Slack can verify the URLs while the
// app is being set up.
func (s *Service) verified(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "use POST", http.StatusMethodNotAllowed)
		return nil, false
	}
	cfg, _ := s.client()
	if cfg.SigningSecret == "" || s.isDone() {
		http.Error(w, "Slack over HTTP is not configured on this server (set a signing secret)", http.StatusNotFound)
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSlackBody))
	if err != nil {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	if err := Verify(r.Header, body, cfg.SigningSecret, s.now()); err != nil {
		s.log.Warn("refused a request claiming to come from Slack", "path", r.URL.Path, "reason", err.Error(), "remote_addr", r.RemoteAddr)
		http.Error(w, "invalid Slack signature", http.StatusUnauthorized)
		return nil, false
	}
	return body, true
}
