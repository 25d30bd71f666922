package webpush_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/webpush"
)

func TestPushReachesTargetsEncryptedAndSigned(t *testing.T) {
	h := newHarness(t)
	alice, bob, carol := h.push.browser("alice"), h.push.browser("bob"), h.push.browser("carol")
	h.subscribe("alice", alice, false)
	h.subscribe("bob", bob, false)
	h.subscribe("carol", carol, true)

	in := h.ask(hitl.CreateRequest{
		Type: hitl.TypeApproval, Question: "Deploy v2 to production?", Context: "the one-time code is 481516",
		SourceAgent: "deploy-bot", Timeout: 600, Targets: &hitl.Targets{Groups: []string{"ops"}},
	})
	d := h.next()
	if d.browser != "alice" {
		t.Fatalf("a question for the group ops was pushed to %s; want alice, its member", d.browser)
	}
	p := d.payload
	if p.ID != in.ID || p.Question != "Deploy v2 to production?" || p.Agent != "deploy-bot" || p.URL != "/i/"+in.ID || p.Type != hitl.TypeApproval {
		t.Errorf("payload = %+v; want the question, its agent and /i/%s", p, in.ID)
	}
	if !p.Deadline.Equal(in.Deadline) {
		t.Errorf("payload deadline = %s; want %s", p.Deadline, in.Deadline)
	}
	for k := range d.raw {
		if k == "context" || k == "options" || k == "metadata" {
			t.Errorf("payload carries %q; it must carry no more than the question", k)
		}
	}

	// A question for no one in particular goes to those who opted in.
	open := h.ask(hitl.CreateRequest{Question: "Anyone: which region?", Timeout: 600})
	d = h.next()
	if d.browser != "carol" || d.payload.ID != open.ID {
		t.Fatalf("an untargeted question went to %s (%s); want carol, who opted in", d.browser, d.payload.ID)
	}
	// A question for bob by name.
	mine := h.ask(hitl.CreateRequest{Question: "Bob, approve the budget?", Timeout: 600, Targets: &hitl.Targets{Users: []string{"bob"}}})
	d = h.next()
	if d.browser != "bob" || d.payload.ID != mine.ID {
		t.Fatalf("bob's question went to %s; want bob", d.browser)
	}
	select {
	case d := <-h.push.got:
		t.Fatalf("an extra push to %s (%s)", d.browser, d.payload.Question)
	default:
	}
	waitEvent(t, h, in.ID, "pushed to alice")
}

func TestPushOptOut(t *testing.T) {
	h := newHarness(t)
	h.subscribe("alice", h.push.browser("alice"), true)
	h.ask(hitl.CreateRequest{Question: "Your one-time code?", Timeout: 600, Notify: &hitl.Notify{Push: &hitl.Switch{Off: true}}})
	later := h.ask(hitl.CreateRequest{Question: "And this one?", Timeout: 600})
	if d := h.next(); d.payload.ID != later.ID {
		t.Fatalf("pushed %q; a question with notify.push false must not be pushed", d.payload.Question)
	}
}

func TestPushGoneSubscriptionIsDeleted(t *testing.T) {
	h := newHarness(t)
	h.subscribe("alice", h.push.browser("alice"), true)
	h.push.answer("alice", http.StatusGone)
	h.ask(hitl.CreateRequest{Question: "Still there?", Timeout: 600})
	deadline := time.Now().Add(10 * time.Second)
	for {
		subs, err := h.store.PushSubscriptions(context.Background(), "alice")
		if err != nil {
			t.Fatal(err)
		}
		if len(subs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the subscription the push service answered 410 for is still kept")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A new subscription of the same person is pushed to; the old one is
	// not tried again.
	h.subscribe("alice", h.push.browser("alice2"), true)
	in := h.ask(hitl.CreateRequest{Question: "And now?", Timeout: 600})
	if d := h.next(); d.browser != "alice2" || d.payload.ID != in.ID {
		t.Fatalf("pushed to %s; want alice2", d.browser)
	}
	if n := h.push.hitsOf("alice"); n != 1 {
		t.Errorf("the gone subscription was tried %d times; want 1", n)
	}
}

func TestPushRetriedAfterServiceErrors(t *testing.T) {
	h := newHarness(t)
	h.subscribe("alice", h.push.browser("alice"), true)
	h.push.answer("alice", http.StatusServiceUnavailable, http.StatusServiceUnavailable)
	in := h.ask(hitl.CreateRequest{Question: "Retry me?", Timeout: 600})
	if d := h.next(); d.payload.ID != in.ID {
		t.Fatalf("pushed %s; want %s", d.payload.ID, in.ID)
	}
	if n := h.push.hitsOf("alice"); n != 3 {
		t.Errorf("the push service was called %d times; want 3 (two 503s, then accepted)", n)
	}
	waitEvent(t, h, in.ID, "pushed to alice")
}

func TestPushSurvivesRestart(t *testing.T) {
	h := newHarness(t)
	key := h.svc.PublicKey()
	h.subscribe("alice", h.push.browser("alice"), true)
	h.svc.Close() // the channel is down while a question arrives
	in := h.ask(hitl.CreateRequest{Question: "Asked while push was down?", Timeout: 600})
	h.restart()
	if got := h.svc.PublicKey(); got != key {
		t.Fatalf("after a restart the VAPID public key is %s; want the stored %s (browsers subscribed with it)", got, key)
	}
	if d := h.next(); d.payload.ID != in.ID {
		t.Fatalf("pushed %s; want the question asked while the channel was down", d.payload.ID)
	}
}

func TestSubscribeRefusesBadSubscriptions(t *testing.T) {
	h := newHarness(t)
	good := h.push.browser("alice").request(false)
	ctx := hitl.WithCaller(context.Background(), hitl.Caller{Name: "alice", Channel: hitl.ChannelWeb, Role: hitl.RoleResponder})
	for _, tc := range []struct {
		name string
		edit func(r *hitl.PushSubscribeRequest)
		want string
	}{
		{"plain http off loopback", func(r *hitl.PushSubscribeRequest) { r.Endpoint = "http://push.example.com/x" }, "https"},
		{"not a URL", func(r *hitl.PushSubscribeRequest) { r.Endpoint = "push" }, "https"},
		{"no endpoint", func(r *hitl.PushSubscribeRequest) { r.Endpoint = "" }, "required"},
		{"short key", func(r *hitl.PushSubscribeRequest) { r.Keys.P256DH = "AAAA" }, "p256dh"},
		{"key off the curve", func(r *hitl.PushSubscribeRequest) { r.Keys.P256DH = "B" + strings.Repeat("A", 86) }, "p256dh"},
		{"short auth", func(r *hitl.PushSubscribeRequest) { r.Keys.Auth = "AAAA" }, "auth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := good
			tc.edit(&r)
			_, err := h.svc.Subscribe(ctx, r)
			if hitl.ErrorCode(err) != hitl.EINVALID || !strings.Contains(hitl.ErrorMessage(err), tc.want) {
				t.Fatalf("Subscribe = %v; want EINVALID about %s", err, tc.want)
			}
		})
	}
	agent := hitl.WithCaller(context.Background(), hitl.Caller{Name: "build-bot", Channel: hitl.ChannelAPI, Role: hitl.RoleAgent})
	if _, err := h.svc.Subscribe(agent, good); hitl.ErrorCode(err) != hitl.EFORBIDDEN {
		t.Errorf("an agent subscribing = %v; want EFORBIDDEN", err)
	}
	sub, err := h.svc.Subscribe(ctx, good)
	if err != nil || sub.User != "alice" {
		t.Fatalf("Subscribe = %+v, %v; want alice's subscription", sub, err)
	}
	ctxBob := hitl.WithCaller(context.Background(), hitl.Caller{Name: "bob", Channel: hitl.ChannelWeb, Role: hitl.RoleResponder})
	if found, err := h.svc.Unsubscribe(ctxBob, good.Endpoint); err != nil || found {
		t.Fatalf("bob unsubscribing alice's browser = %v, %v; want false: it is not his", found, err)
	}
	if found, err := h.svc.Unsubscribe(ctx, good.Endpoint); err != nil || !found {
		t.Fatalf("Unsubscribe = %v, %v; want true", found, err)
	}
}

// Unless private addresses are allowed, an endpoint on a non-public
// address is refused, including an IPv6 address that carries one.
func TestSubscribeRefusesPrivateEndpoints(t *testing.T) {
	h := newHarness(t)
	svc := webpush.New(h.b, h.store, &webpush.Options{Subject: subject, Identities: h.store})
	ctx := hitl.WithCaller(context.Background(), hitl.Caller{Name: "alice", Channel: hitl.ChannelWeb, Role: hitl.RoleResponder})
	for _, u := range []string{"https://127.0.0.1/x", "https://[::1]/x", "https://169.254.169.254/x",
		"https://[64:ff9b::a9fe:a9fe]/x", "https://[2002:a9fe:a9fe::]/x", "https://[64:ff9b::7f00:1]/x", "https://[2002:7f00:1::]/x",
		"https://[2001:0:4136:e378::80ff:fffe]/x", "https://[::7f00:1]/x"} {
		r := h.push.browser("alice").request(false)
		r.Endpoint = u
		if _, err := svc.Subscribe(ctx, r); hitl.ErrorCode(err) != hitl.EINVALID || !strings.Contains(hitl.ErrorMessage(err), "public") {
			t.Errorf("Subscribe(%s) = %v; want EINVALID: not a public address", u, err)
		}
	}
}

// waitEvent waits for the interaction's notified event on push with
// detail.
func waitEvent(t *testing.T, h *harness, id, detail string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		evs, err := h.store.InteractionEvents(context.Background(), id, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Type == hitl.EventNotified && ev.Channel == hitl.ChannelPush && ev.Detail == detail {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no notified event %q on push", detail)
}

// TestPushOnlyToUsers: once a server has users, a browser subscribed for
// someone who is not one of them (subscribed before login was turned on,
// or a user since removed) is pushed nothing; removing a user removes
// their subscriptions.
func TestPushOnlyToUsers(t *testing.T) {
	h := newHarness(t)
	h.subscribe("carol", h.push.browser("carol"), true)
	// dave is not a user: he cannot subscribe, and a subscription of his
	// from before the server had users is skipped.
	dave := h.push.browser("dave")
	ctx := hitl.WithCaller(context.Background(), hitl.Caller{Name: "dave", Channel: hitl.ChannelAPI, Role: hitl.RoleResponder})
	if _, err := h.svc.Subscribe(ctx, dave.request(true)); hitl.ErrorCode(err) != hitl.EFORBIDDEN {
		t.Fatalf("dave subscribing: got %v, want EFORBIDDEN", err)
	}
	old := dave.request(true)
	if err := h.store.SavePushSubscription(context.Background(), &hitl.PushSubscription{
		Endpoint: old.Endpoint, User: "dave", P256DH: old.Keys.P256DH, Auth: old.Keys.Auth, Untargeted: true, CreatedAt: time.Now(),
	}); err != nil {
		t.Fatal(err)
	}
	first := h.ask(hitl.CreateRequest{Question: "Anyone: which region?", Timeout: 600})
	if d := h.next(); d.browser != "carol" || d.payload.ID != first.ID {
		t.Fatalf("an untargeted question went to %s; want carol", d.browser)
	}
	if err := h.store.DeleteUser(context.Background(), "carol"); err != nil {
		t.Fatal(err)
	}
	if subs, err := h.store.PushSubscriptions(context.Background(), "carol"); err != nil || len(subs) != 0 {
		t.Fatalf("carol's subscriptions after she was removed: %d, %v; want none", len(subs), err)
	}
	h.subscribe("alice", h.push.browser("alice"), true)
	// awaitAlice waits for id's push to alice. She may get the first
	// question too (a step may take it up after she subscribed: it is
	// under maxPushAge); no one else may get anything.
	awaitAlice := func(id string) {
		t.Helper()
		for {
			d := h.next()
			if d.browser != "alice" {
				t.Fatalf("pushed %q to %s; want pushes to alice only", d.payload.Question, d.browser)
			}
			if d.payload.ID == id {
				return
			}
		}
	}
	awaitAlice(h.ask(hitl.CreateRequest{Question: "Anyone: which zone?", Timeout: 600}).ID)
	// Asked once alice had the last, so pushed in a later step: when she
	// has it, every push of the questions before is done.
	awaitAlice(h.ask(hitl.CreateRequest{Question: "Alice, approve?", Timeout: 600, Targets: &hitl.Targets{Users: []string{"alice"}}}).ID)
	if n := h.push.hitsOf("dave"); n != 0 {
		t.Errorf("%d pushes to dave, who is not a user; want none", n)
	}
	if n := h.push.hitsOf("carol"); n != 1 {
		t.Errorf("%d pushes to carol; want 1, before she was removed", n)
	}
}
