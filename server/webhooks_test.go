package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/server"
	"github.com/hitl-sh/hitl/slack"
	"github.com/hitl-sh/hitl/webhook"
)

// webhookServer is a real server with authentication and the webhooks,
// refusing private addresses unless allowPrivate.
func webhookServer(t *testing.T, allowPrivate bool) (admin, agent *client.Client, b *broker.Broker) {
	t.Helper()
	s := hitltest.Start(t, &hitltest.Options{Configure: func(t testing.TB, e *hitltest.Engine, opts *server.Options) {
		cipher, err := slack.NewCipher([]byte("0123456789abcdef0123456789abcdef"))
		if err != nil {
			t.Fatal(err)
		}
		hooks := webhook.New(e.Store, e.Broker, &webhook.Options{Sealer: cipher, AllowPrivate: allowPrivate})
		if err := hooks.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		e.OnClose(func() { hooks.Close() })
		opts.Webhooks = hooks
	}})
	admin = client.New(s.URL, &client.Options{Token: s.Token(t, "root", hitl.RoleAdmin)})
	agent = client.New(s.URL, &client.Options{Token: s.Token(t, "build-bot", hitl.RoleAgent)})
	return admin, agent, s.Broker
}

func TestWebhooksAPI(t *testing.T) {
	got := make(chan *http.Request, 10)
	bodies := make(chan []byte, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- r
		bodies <- body
	}))
	t.Cleanup(receiver.Close)
	admin, agent, _ := webhookServer(t, true)
	ctx := context.Background()

	sub, err := admin.AddWebhook(ctx, hitl.WebhookRequest{URL: receiver.URL + "/all", Events: []hitl.WebhookEvent{hitl.WebhookCancelled}, Description: "audit"})
	if err != nil {
		t.Fatalf("AddWebhook: %v", err)
	}
	if sub.Secret == "" || sub.ID == "" {
		t.Fatalf("AddWebhook: %+v; want an id and the secret", sub)
	}
	if _, err := agent.AddWebhook(ctx, hitl.WebhookRequest{URL: receiver.URL, Events: hitl.WebhookEvents}); hitl.ErrorCode(err) != hitl.EFORBIDDEN {
		t.Errorf("AddWebhook as an agent: %v; want forbidden", err)
	}
	if _, err := admin.AddWebhook(ctx, hitl.WebhookRequest{URL: receiver.URL, Events: []hitl.WebhookEvent{"interaction.viewed"}}); hitl.ErrorCode(err) != hitl.EINVALID {
		t.Errorf("AddWebhook with an unknown event: %v; want invalid", err)
	}
	list, err := admin.Webhooks(ctx)
	if err != nil || len(list) != 1 || list[0].Secret != "" || list[0].Description != "audit" {
		t.Fatalf("Webhooks: %+v, %v; want the subscription without its secret", list, err)
	}
	serverSecret, err := admin.WebhookSecret(ctx)
	if err != nil {
		t.Fatalf("WebhookSecret: %v", err)
	}
	if _, err := agent.WebhookSecret(ctx); hitl.ErrorCode(err) != hitl.EFORBIDDEN {
		t.Errorf("WebhookSecret as an agent: %v; want forbidden", err)
	}

	// An agent asks with a callback and leaves; the question is cancelled.
	in, _, err := agent.Create(ctx, hitl.CreateRequest{Question: "Ship it?", Type: hitl.TypeApproval, CallbackURL: receiver.URL + "/cb"})
	if err != nil {
		t.Fatalf("Create with callback_url: %v", err)
	}
	if in.CallbackURL != receiver.URL+"/cb" {
		t.Errorf("created: callback_url %q", in.CallbackURL)
	}
	if _, err := agent.Cancel(ctx, in.ID, "changed my mind"); err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{"/cb": serverSecret, "/all": sub.Secret}
	for range 2 {
		r, body := <-got, <-bodies
		if err := client.VerifyWebhook(secrets[r.URL.Path], r.Header, body); err != nil {
			t.Errorf("delivery to %s: %v", r.URL.Path, err)
		}
		if r.URL.Path == "/cb" {
			var back hitl.Interaction
			if err := json.Unmarshal(body, &back); err != nil || back.ID != in.ID || back.Status != hitl.StatusCancelled {
				t.Errorf("callback body: %s (%v); want the cancelled interaction", body, err)
			}
		}
	}
	hitltest.WaitFor(t, "both deliveries are recorded", func() bool {
		ds, err := admin.Deliveries(ctx, hitl.DeliveryFilter{InteractionID: in.ID})
		if err != nil || len(ds) != 2 {
			return false
		}
		for _, d := range ds {
			if d.State != hitl.DeliveryDelivered || len(d.History) != 1 {
				return false
			}
		}
		return true
	})
	if ds, err := admin.Deliveries(ctx, hitl.DeliveryFilter{SubscriptionID: sub.ID}); err != nil || len(ds) != 1 {
		t.Errorf("Deliveries of the subscription: %d, %v; want 1", len(ds), err)
	}
	if _, err := agent.Deliveries(ctx, hitl.DeliveryFilter{InteractionID: in.ID}); hitl.ErrorCode(err) != hitl.EFORBIDDEN {
		t.Errorf("Deliveries as an agent: %v; want forbidden", err)
	}
	if err := admin.DeleteWebhook(ctx, sub.ID); err != nil {
		t.Fatalf("DeleteWebhook: %v", err)
	}
	if err := admin.DeleteWebhook(ctx, sub.ID); hitl.ErrorCode(err) != hitl.ENOTFOUND {
		t.Errorf("DeleteWebhook again: %v; want not found", err)
	}
}

func TestCallbackURLRefusedWhenPrivate(t *testing.T) {
	_, agent, _ := webhookServer(t, false)
	for _, u := range []string{"http://127.0.0.1:9/cb", "http://169.254.169.254/latest", "ftp://example.com/cb", "http://[::1]/cb"} {
		_, _, err := agent.Create(context.Background(), hitl.CreateRequest{Question: "Ship it?", CallbackURL: u})
		if hitl.ErrorCode(err) != hitl.EINVALID {
			t.Errorf("Create with callback_url %s: %v; want 400", u, err)
		}
	}
}
