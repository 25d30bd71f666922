package server

import (
	"context"
	"net/http"

	"github.com/hitl-sh/hitl"
)

// The Web Push channel's routes, for the person signed in:
//
//	GET    /api/v1/push/key            the server's VAPID public key, for pushManager.subscribe
//	POST   /api/v1/push/subscriptions  keep this browser's subscription (its PushSubscription JSON)
//	DELETE /api/v1/push/subscriptions  forget it, by endpoint

// PushChannel is the Web Push channel as the server serves it (the
// webpush package's *Service).
type PushChannel interface {
	// PublicKey returns the VAPID public key, base64url.
	PublicKey() string
	// Subscribe keeps a browser's subscription for the caller.
	Subscribe(ctx context.Context, r hitl.PushSubscribeRequest) (*hitl.PushSubscription, error)
	// Unsubscribe removes the caller's subscription with endpoint, and
	// reports whether there was one.
	Unsubscribe(ctx context.Context, endpoint string) (bool, error)
}

func (s *Server) pushRoutes() {
	s.mux.HandleFunc("GET /api/v1/push/key", s.handle(s.handlePushKey))
	s.mux.HandleFunc("POST /api/v1/push/subscriptions", s.handle(s.handlePushSubscribe))
	s.mux.HandleFunc("DELETE /api/v1/push/subscriptions", s.handle(s.handlePushUnsubscribe))
}

func (s *Server) handlePushKey(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"public_key": s.push.PublicKey()})
	return nil
}

// pushSubscriptionView is a kept subscription as the API shows it: its
// keys are not sent back.
type pushSubscriptionView struct {
	Endpoint   string `json:"endpoint"`
	Untargeted bool   `json:"untargeted"`
}

func (s *Server) handlePushSubscribe(w http.ResponseWriter, r *http.Request) error {
	var req hitl.PushSubscribeRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	sub, err := s.push.Subscribe(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, pushSubscriptionView{Endpoint: sub.Endpoint, Untargeted: sub.Untargeted})
	return nil
}

// pushUnsubscribeBody is DELETE /api/v1/push/subscriptions's body.
type pushUnsubscribeBody struct {
	Endpoint string `json:"endpoint"`
}

func (s *Server) handlePushUnsubscribe(w http.ResponseWriter, r *http.Request) error {
	var b pushUnsubscribeBody
	if err := decodeJSON(w, r, &b); err != nil {
		return err
	}
	found, err := s.push.Unsubscribe(r.Context(), b.Endpoint)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"deleted": found})
	return nil
}
