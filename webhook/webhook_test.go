package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
)

// ask creates an interaction as an agent, through the engine.
func (r *replica) ask(req hitl.CreateRequest) *hitl.Interaction {
	r.t.Helper()
	if req.Question == "" {
		req.Question = "Deploy build 1432?"
	}
	if req.Type == "" {
		req.Type = hitl.TypeApproval
	}
	in, _, err := r.b.Create(agent(r.t), req)
	if err != nil {
		r.t.Fatalf("Create: %v", err)
	}
	return in
}

// answer answers id as an admin.
func (r *replica) answer(id string, v string) {
	r.t.Helper()
	if _, err := r.b.Respond(admin(r.t), id, json.RawMessage(v)); err != nil {
		r.t.Fatalf("Respond: %v", err)
	}
}

func TestCallbackIsSignedWithTheServerSecret(t *testing.T) {
	rc := newReceiver(t)
	rc.expect("/done", testServerSecret)
	r := start(t, hitltest.SQLiteDB(t), Options{ServerSecret: testServerSecret})
	in := r.ask(hitl.CreateRequest{CallbackURL: rc.URL + "/done"})
	r.answer(in.ID, "true")

	g := rc.next(t)
	if !g.verified {
		t.Fatalf("the callback's signature does not verify (id %q, timestamp %q, signature %q)", g.id, g.timestamp, g.signature)
	}
	if !strings.HasPrefix(g.id, "msg_") {
		t.Errorf("webhook-id %q, want msg_…", g.id)
	}
	// The body is the interaction as GET returns it.
	got, err := r.b.Get(admin(t), in.ID)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(got)
	if string(g.body) != string(want) {
		t.Errorf("callback body:\n got %s\nwant %s", g.body, want)
	}
	r.waitUntil("the delivery is recorded", func() bool {
		ds := r.deliveries(in.ID)
		return len(ds) == 1 && ds[0].State == hitl.DeliveryDelivered
	})
	d := r.deliveries(in.ID)[0]
	if d.ID != g.id || d.Attempts != 1 || len(d.History) != 1 || d.History[0].StatusCode != http.StatusNoContent {
		t.Errorf("delivery: %+v, history %v; want one attempt answered 204 with id %s", d, d.History, g.id)
	}
}

func TestFailsTwiceThenSucceeds(t *testing.T) {
	rc := newReceiver(t)
	rc.expect("/done", testServerSecret)
	rc.failNext(http.StatusInternalServerError, http.StatusServiceUnavailable)
	r := start(t, hitltest.SQLiteDB(t), Options{ServerSecret: testServerSecret})
	in := r.ask(hitl.CreateRequest{CallbackURL: rc.URL + "/done"})
	if _, err := r.b.Cancel(agent(t), in.ID, "not needed"); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 3 {
		g := rc.next(t)
		if !g.verified {
			t.Errorf("attempt %d: signature does not verify", len(ids)+1)
		}
		ids = append(ids, g.id)
	}
	if ids[0] != ids[1] || ids[1] != ids[2] {
		t.Errorf("webhook-ids of the three attempts: %v; want one id", ids)
	}
	r.waitUntil("the third attempt is recorded", func() bool {
		ds := r.deliveries(in.ID)
		return len(ds) == 1 && ds[0].State == hitl.DeliveryDelivered
	})
	d := r.deliveries(in.ID)[0]
	var codes []int
	for _, a := range d.History {
		codes = append(codes, a.StatusCode)
	}
	if fmt.Sprint(codes) != "[500 503 204]" || d.Attempts != 3 {
		t.Errorf("attempts %d with statuses %v; want 3: [500 503 204]", d.Attempts, codes)
	}
	if d.History[0].Error == "" || d.History[2].Error != "" {
		t.Errorf("attempt errors %q, %q; want the failure said, and none for the success", d.History[0].Error, d.History[2].Error)
	}
	select {
	case g := <-rc.got:
		t.Errorf("a fourth request arrived (id %s)", g.id)
	default:
	}
}

func TestSubscriptionEvents(t *testing.T) {
	rc := newReceiver(t)
	r := start(t, hitltest.SQLiteDB(t), Options{ServerSecret: testServerSecret})
	sub, err := r.s.AddWebhook(admin(t), hitl.WebhookRequest{URL: rc.URL + "/ends", Events: []hitl.WebhookEvent{hitl.WebhookCreated, hitl.WebhookExpired, hitl.WebhookAnswered}})
	if err != nil {
		t.Fatalf("AddWebhook: %v", err)
	}
	if !strings.HasPrefix(sub.Secret, "whsec_") {
		t.Fatalf("AddWebhook: secret %q, want whsec_…", sub.Secret)
	}
	rc.expect("/ends", sub.Secret)
	in := r.ask(hitl.CreateRequest{})
	var types []string
	for i := range 2 {
		if i == 1 {
			// Answered once the created event arrived: the deliveries of
			// one claim are sent concurrently, in no set order.
			r.answer(in.ID, "false")
		}
		g := rc.next(t)
		if !g.verified {
			t.Errorf("a subscription's delivery does not verify with its secret")
		}
		var env struct {
			Type string            `json:"type"`
			Data *hitl.Interaction `json:"data"`
		}
		if err := json.Unmarshal(g.body, &env); err != nil || env.Data == nil || env.Data.ID != in.ID {
			t.Fatalf("body %s: %v; want {type, timestamp, data: the interaction}", g.body, err)
		}
		types = append(types, env.Type+"/"+string(env.Data.Status))
	}
	if fmt.Sprint(types) != "[interaction.created/pending interaction.answered/answered]" {
		t.Errorf("events: %v; want created (pending) then answered", types)
	}
	// The list never shows the secret again.
	list, err := r.s.Webhooks(admin(t))
	if err != nil || len(list) != 1 || list[0].Secret != "" {
		t.Errorf("Webhooks: %v, %v; want the one subscription without its secret", list, err)
	}
	ds, err := r.s.Deliveries(admin(t), hitl.DeliveryFilter{SubscriptionID: sub.ID})
	if err != nil || len(ds) != 2 {
		t.Errorf("Deliveries of the subscription: %d, %v; want 2", len(ds), err)
	}
	if _, err := r.s.Webhooks(agent(t)); hitl.ErrorCode(err) != hitl.EFORBIDDEN {
		t.Errorf("Webhooks as an agent: %v; want forbidden", err)
	}
}

// A restart between the attempts, and events that happened while the
// webhooks were down, lose nothing.
func TestRestartLosesNothing(t *testing.T) {
	rc := newReceiver(t)
	rc.expect("/done", testServerSecret)
	db := hitltest.SQLiteDB(t)
	rc.failNext(http.StatusBadGateway)
	// The retry is seconds away: time enough to stop before it.
	first := start(t, db, Options{ServerSecret: testServerSecret, RetryBase: 4 * time.Second})
	in := first.ask(hitl.CreateRequest{CallbackURL: rc.URL + "/done"})
	first.answer(in.ID, "true")
	failed := rc.next(t)
	first.waitUntil("the failed attempt is recorded", func() bool {
		ds := first.deliveries(in.ID)
		return len(ds) == 1 && ds[0].State == hitl.DeliveryPending && len(ds[0].History) == 1
	})
	first.stop()
	// While the webhooks are down, another question ends.
	offline := open(t, db)
	other := offline.ask(hitl.CreateRequest{CallbackURL: rc.URL + "/done"})
	offline.answer(other.ID, "false")
	offline.stop()

	second := start(t, db, Options{ServerSecret: testServerSecret})
	byID := map[string]received{}
	for range 2 {
		g := rc.next(t)
		if !g.verified {
			t.Errorf("after the restart: a delivery does not verify")
		}
		byID[g.id] = g
	}
	retry, ok := byID[failed.id]
	if !ok || string(retry.body) != string(failed.body) {
		t.Errorf("after the restart: no retry with the first attempt's webhook-id %s and body (got ids %v)", failed.id, byID)
	}
	second.waitUntil("both are recorded as delivered", func() bool {
		a, b := second.deliveries(in.ID), second.deliveries(other.ID)
		return len(a) == 1 && a[0].State == hitl.DeliveryDelivered && len(b) == 1 && b[0].State == hitl.DeliveryDelivered
	})
	if d := second.deliveries(in.ID)[0]; d.Attempts != 2 || len(d.History) != 2 {
		t.Errorf("the delivery across the restart: %d attempts, history %v; want 2", d.Attempts, d.History)
	}
	if _, ok := byID[second.deliveries(other.ID)[0].ID]; !ok {
		t.Errorf("the event of the question that ended while the webhooks were down was not sent")
	}
}

// Two replicas over one PostgreSQL database send each event once.
func TestTwoReplicasDeliverOnce(t *testing.T) {
	rc := newReceiver(t)
	db := hitltest.PostgresDB(t)
	a := start(t, db, Options{ServerSecret: testServerSecret})
	b := start(t, db, Options{ServerSecret: testServerSecret})
	sub, err := a.s.AddWebhook(admin(t), hitl.WebhookRequest{URL: rc.URL + "/all", Events: hitl.WebhookEvents})
	if err != nil {
		t.Fatal(err)
	}
	rc.expect("/all", sub.Secret)
	rc.expect("/cb", testServerSecret)
	const n = 10
	var ids []string
	for i := range n {
		r := []*replica{a, b}[i%2]
		in := r.ask(hitl.CreateRequest{CallbackURL: rc.URL + "/cb"})
		ids = append(ids, in.ID)
		[]*replica{b, a}[i%2].answer(in.ID, "true")
	}
	// Each interaction: created and answered to the subscription, and
	// its callback: 3n requests, each webhook-id once.
	seen := map[string]int{}
	for range 3 * n {
		g := rc.next(t)
		if !g.verified {
			t.Errorf("a delivery does not verify")
		}
		seen[g.id]++
	}
	a.waitUntil("every delivery is recorded", func() bool {
		for _, id := range ids {
			for _, d := range a.deliveries(id) {
				if d.State != hitl.DeliveryDelivered {
					return false
				}
			}
		}
		return true
	})
	for id, c := range seen {
		if c != 1 {
			t.Errorf("webhook-id %s arrived %d times", id, c)
		}
	}
	total := 0
	for _, id := range ids {
		total += len(a.deliveries(id))
	}
	if total != 3*n || len(seen) != 3*n {
		t.Errorf("%d delivery rows, %d distinct requests; want %d of each", total, len(seen), 3*n)
	}
	select {
	case g := <-rc.got:
		t.Errorf("an extra request arrived (id %s)", g.id)
	default:
	}
}

// Unless allowed, webhooks cannot reach loopback, private or link-local
// addresses: not when the URL is given, nor when it is dialled.
func TestPrivateAddressesRefused(t *testing.T) {
	rc := newReceiver(t) // on 127.0.0.1
	rc.expect("/done", testServerSecret)
	r := startWith(t, hitltest.SQLiteDB(t), Options{ServerSecret: testServerSecret})
	ctx := admin(t)
	for _, u := range []string{rc.URL + "/x", "http://localhost:9/x", "http://10.1.2.3/x", "http://169.254.169.254/latest/meta-data",
		"http://[::1]/x", "http://[fe80::1]/x", "http://192.168.0.10/x", "http://[::ffff:127.0.0.1]/x", "http://100.64.0.1/x",
		"http://[64:ff9b::a9fe:a9fe]/", "http://[2002:a9fe:a9fe::]/", "https://[64:ff9b::7f00:1]/x", "https://[2002:7f00:1::]/x"} {
		if _, err := r.s.AddWebhook(ctx, hitl.WebhookRequest{URL: u, Events: hitl.WebhookEvents}); hitl.ErrorCode(err) != hitl.EINVALID {
			t.Errorf("AddWebhook(%s): %v; want refused", u, err)
		}
		if err := r.s.CheckCallback(ctx, u); hitl.ErrorCode(err) != hitl.EINVALID || !strings.Contains(hitl.ErrorMessage(err), "public") && !strings.Contains(hitl.ErrorMessage(err), "resolve") {
			t.Errorf("CheckCallback(%s): %v; want refused as not public", u, err)
		}
	}
	for _, u := range []string{"ftp://example.com/x", "/relative", "https://", "javascript:alert(1)"} {
		if err := r.s.CheckCallback(ctx, u); hitl.ErrorCode(err) != hitl.EINVALID {
			t.Errorf("CheckCallback(%s): %v; want invalid", u, err)
		}
	}
	if err := r.s.CheckCallback(ctx, "https://93.184.215.14/hook"); err != nil {
		t.Errorf("CheckCallback of a public address: %v", err)
	}
	// Through the Go library, which does not check: the dialer refuses.
	in := r.ask(hitl.CreateRequest{CallbackURL: rc.URL + "/done"})
	r.answer(in.ID, "true")
	r.waitUntil("the attempt is recorded", func() bool {
		ds := r.deliveries(in.ID)
		return len(ds) == 1 && len(ds[0].History) == 1
	})
	a := r.deliveries(in.ID)[0].History[0]
	if !strings.Contains(a.Error, "not a public address") || a.StatusCode != 0 {
		t.Errorf("attempt to a loopback receiver: status %d, error %q; want refused by the dialer", a.StatusCode, a.Error)
	}
	select {
	case <-rc.got:
		t.Errorf("the loopback receiver was reached")
	default:
	}
}

func TestServerSecretIsMadeOnceAndKept(t *testing.T) {
	db := hitltest.SQLiteDB(t)
	first := start(t, db, Options{})
	secret, err := first.s.ServerSecret(admin(t))
	if err != nil || !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("ServerSecret: %q, %v; want a whsec_ secret", secret, err)
	}
	if _, err := first.s.ServerSecret(agent(t)); hitl.ErrorCode(err) != hitl.EFORBIDDEN {
		t.Errorf("ServerSecret as an agent: %v; want forbidden", err)
	}
	sealed, err := first.store.WebhookSecret(context.Background())
	if err != nil || strings.Contains(sealed, strings.TrimPrefix(secret, "whsec_")) {
		t.Errorf("stored secret %q: %v; want it sealed", sealed, err)
	}
	first.stop()
	second := start(t, db, Options{})
	if again, _ := second.s.ServerSecret(admin(t)); again != secret {
		t.Errorf("after a restart: ServerSecret %q, want the same %q", again, secret)
	}
}
