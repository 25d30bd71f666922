package server

import (
	"context"
	"net/http"
	"strconv"

	"github.com/hitl-sh/hitl"
)

// Webhooks are the webhooks as the server serves them (the webhook
// package's *Service, which checks that the caller is an admin).
type Webhooks interface {
	// CheckCallback refuses a callback_url deliveries would not be sent to.
	CheckCallback(ctx context.Context, url string) error
	AddWebhook(ctx context.Context, n hitl.WebhookRequest) (*hitl.WebhookSubscription, error)
	Webhooks(ctx context.Context) ([]*hitl.WebhookSubscription, error)
	Webhook(ctx context.Context, id string) (*hitl.WebhookSubscription, error)
	DeleteWebhook(ctx context.Context, id string) error
	// Deliveries lists deliveries with their attempts, newest first.
	Deliveries(ctx context.Context, f hitl.DeliveryFilter) ([]*hitl.WebhookDelivery, error)
	// ServerSecret is the secret callback_url deliveries are signed with.
	ServerSecret(ctx context.Context) (string, error)
}

// The webhooks' routes, for admins (the webhook service checks the
// caller's role):
//
//	POST   /api/v1/webhooks                       subscribe; the reply shows the secret, once
//	GET    /api/v1/webhooks                       the subscriptions, without secrets
//	GET    /api/v1/webhooks/secret                the server's secret, which signs callback_url deliveries
//	GET    /api/v1/webhooks/{id}                  one subscription
//	DELETE /api/v1/webhooks/{id}                  unsubscribe (its deliveries go too)
//	GET    /api/v1/webhooks/{id}/deliveries       its deliveries with their attempts, newest first
//	GET    /api/v1/interactions/{id}/deliveries   an interaction's deliveries with their attempts

// webhookRoutes registers the webhooks' routes, when they run.
func (s *Server) webhookRoutes() {
	if s.webhooks == nil {
		return
	}
	s.mux.HandleFunc("POST /api/v1/webhooks", s.handle(s.handleAddWebhook))
	s.mux.HandleFunc("GET /api/v1/webhooks", s.handle(s.handleListWebhooks))
	s.mux.HandleFunc("GET /api/v1/webhooks/secret", s.handle(s.handleWebhookSecret))
	s.mux.HandleFunc("GET /api/v1/webhooks/{id}", s.handle(s.handleGetWebhook))
	s.mux.HandleFunc("DELETE /api/v1/webhooks/{id}", s.handle(s.handleDeleteWebhook))
	s.mux.HandleFunc("GET /api/v1/webhooks/{id}/deliveries", s.handle(s.handleWebhookDeliveries))
	s.mux.HandleFunc("GET /api/v1/interactions/{id}/deliveries", s.handle(s.handleInteractionDeliveries))
}

// checkCallback refuses a callback_url the webhooks would not send to, or
// any when they do not run.
func (s *Server) checkCallback(r *http.Request, url string) error {
	if url == "" {
		return nil
	}
	if s.webhooks == nil {
		return hitl.Errorf(hitl.EINVALID, "callback_url cannot be used: this server does not send webhooks")
	}
	return s.webhooks.CheckCallback(r.Context(), url)
}

func (s *Server) handleAddWebhook(w http.ResponseWriter, r *http.Request) error {
	var n hitl.WebhookRequest
	if err := decodeJSON(w, r, &n); err != nil {
		return err
	}
	sub, err := s.webhooks.AddWebhook(r.Context(), n)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/webhooks/"+sub.ID)
	writeJSON(w, http.StatusCreated, sub)
	return nil
}

func (s *Server) handleListWebhooks(w http.ResponseWriter, r *http.Request) error {
	list, err := s.webhooks.Webhooks(r.Context())
	if err != nil {
		return err
	}
	if list == nil {
		list = []*hitl.WebhookSubscription{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"webhooks": list})
	return nil
}

func (s *Server) handleGetWebhook(w http.ResponseWriter, r *http.Request) error {
	sub, err := s.webhooks.Webhook(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sub)
	return nil
}

func (s *Server) handleDeleteWebhook(w http.ResponseWriter, r *http.Request) error {
	if err := s.webhooks.DeleteWebhook(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) handleWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	secret, err := s.webhooks.ServerSecret(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"secret": secret})
	return nil
}

func (s *Server) handleWebhookDeliveries(w http.ResponseWriter, r *http.Request) error {
	return s.writeDeliveries(w, r, hitl.DeliveryFilter{SubscriptionID: r.PathValue("id")})
}

func (s *Server) handleInteractionDeliveries(w http.ResponseWriter, r *http.Request) error {
	return s.writeDeliveries(w, r, hitl.DeliveryFilter{InteractionID: r.PathValue("id")})
}

// writeDeliveries writes {"deliveries": […]}, newest first (?limit=, at
// most 500).
func (s *Server) writeDeliveries(w http.ResponseWriter, r *http.Request, f hitl.DeliveryFilter) error {
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return hitl.Errorf(hitl.EINVALID, "limit must be a positive integer")
		}
		f.Limit = n
	}
	list, err := s.webhooks.Deliveries(r.Context(), f)
	if err != nil {
		return err
	}
	if list == nil {
		list = []*hitl.WebhookDelivery{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"deliveries": list})
	return nil
}
