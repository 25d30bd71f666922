package webpush_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/secret"
	"github.com/hitl-sh/hitl/webpush"
)

// TestPushOnceAcrossReplicas: two replicas over one PostgreSQL database
// share the VAPID key, and each question is pushed once, whichever
// replica it was asked on.
func TestPushOnceAcrossReplicas(t *testing.T) {
	db := hitltest.PostgresDB(t) // skips without a server
	push := newPushService(t)
	c, err := secret.NewCipher(bytes.Repeat([]byte{9}, secret.KeySize), hitl.ChannelPush)
	if err != nil {
		t.Fatal(err)
	}
	var brokers []*broker.Broker
	var svcs []*webpush.Service
	for i := range 2 {
		e := hitltest.OpenEngine(t, db, nil)
		b := e.Broker
		svc := webpush.New(b, e.Store, &webpush.Options{
			Subject: subject, Cipher: c, AllowPrivate: true, RetryBase: 20 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo})).With("replica", i),
		})
		if err := svc.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Close() }) // before the engine's
		brokers, svcs = append(brokers, b), append(svcs, svc)
	}
	if svcs[0].PublicKey() != svcs[1].PublicKey() {
		t.Fatalf("the replicas' VAPID keys differ: %s, %s", svcs[0].PublicKey(), svcs[1].PublicKey())
	}
	push.publicKey = svcs[0].PublicKey
	alice := push.browser("alice")
	ctx := hitl.WithCaller(context.Background(), hitl.Caller{Name: "alice", Channel: hitl.ChannelWeb, Role: hitl.RoleResponder})
	if _, err := svcs[1].Subscribe(ctx, alice.request(true)); err != nil {
		t.Fatal(err)
	}
	push.answer("alice", 503) // the first push is retried, by either replica

	agent := hitl.WithCaller(context.Background(), hitl.Caller{Name: "build-bot", Channel: hitl.ChannelAPI, Role: hitl.RoleAgent})
	const n = 8
	want := map[string]bool{}
	for i := range n {
		in, _, err := brokers[i%2].Create(agent, hitl.CreateRequest{Question: fmt.Sprintf("Question %d?", i), Timeout: 600})
		if err != nil {
			t.Fatal(err)
		}
		want[in.ID] = true
	}
	got := map[string]int{}
	for range n {
		select {
		case d := <-push.got:
			got[d.payload.ID]++
		case <-time.After(15 * time.Second):
			t.Fatalf("%d of %d questions pushed in 15s", len(got), n)
		}
	}
	for id := range want {
		if got[id] != 1 {
			t.Errorf("question %s pushed %d times; want once", id, got[id])
		}
	}
	if hits := push.hitsOf("alice"); hits != n+1 {
		t.Errorf("the push service was called %d times; want %d (each question once, and one retry)", hits, n+1)
	}
}
