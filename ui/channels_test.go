package ui_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/hitl-sh/hitl/email"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/secret"
	"github.com/hitl-sh/hitl/server"
	"github.com/hitl-sh/hitl/webhook"
	"github.com/hitl-sh/hitl/webpush"
)

// addChannels starts the Web Push and email channels and the webhooks o
// asks for, and gives them to the server's options.
func addChannels(t testing.TB, e *hitltest.Engine, o serverOptions, opts *server.Options) {
	b, store := e.Broker, e.Store
	t.Helper()
	key := bytes.Repeat([]byte{7}, secret.KeySize)
	if o.push {
		c, err := secret.NewCipher(key, "push")
		if err != nil {
			t.Fatal(err)
		}
		wp := webpush.New(b, store, &webpush.Options{Cipher: c, Identities: store, AllowPrivate: true})
		if err := wp.Start(context.Background()); err != nil {
			t.Fatalf("start web push: %v", err)
		}
		e.OnClose(func() { wp.Close() })
		opts.Push = wp
	}
	if o.webhooks {
		c, err := secret.NewCipher(key, "webhooks")
		if err != nil {
			t.Fatal(err)
		}
		// Retries wait an hour: a failing delivery stays pending.
		hooks := webhook.New(store, b, &webhook.Options{Sealer: c, AllowPrivate: true, RetryBase: time.Hour})
		if err := hooks.Start(context.Background()); err != nil {
			t.Fatalf("start webhooks: %v", err)
		}
		e.OnClose(func() { hooks.Close() })
		opts.Webhooks = hooks
	}
	if o.email {
		c, err := secret.NewCipher(key, "email")
		if err != nil {
			t.Fatal(err)
		}
		em := email.New(b, store, &email.Options{Cipher: c, Identities: store})
		if err := em.Start(context.Background()); err != nil {
			t.Fatalf("start email: %v", err)
		}
		e.OnClose(func() { em.Close() })
		opts.Email = em
	}
}
