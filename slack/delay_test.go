package slack

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/slackfake"
)

// The delay runs on the store's due times and one timer; these tests run
// in a synctest bubble, where time.Sleep moves a fake clock once every
// goroutine is blocked, so two simulated minutes pass at once.

// delayed is a stored configuration posting after two minutes.
func delayed() *hitl.SlackConfig {
	c := httpConfig()
	c.DelaySeconds = 120
	return c
}

// posts returns the posts of the message of id so far.
func posts(f *slackfake.Server, id string) int {
	n := 0
	for _, c := range f.Calls("chat.postMessage") {
		if strings.Contains(c.Blocks(), id) {
			n++
		}
	}
	return n
}

func TestDelayHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, harnessOptions{config: delayed(), inProcess: true})
		in := h.ask(hitl.CreateRequest{})
		synctest.Wait()
		row := h.row(in.ID)
		if row.State != hitl.SlackScheduled || !row.DueAt.Equal(in.CreatedAt.Add(120*time.Second)) {
			t.Fatalf("row: got %s due %v, want scheduled due %v", row.State, row.DueAt, in.CreatedAt.Add(120*time.Second))
		}
		time.Sleep(119 * time.Second)
		synctest.Wait()
		if n := posts(h.fake, in.ID); n != 0 {
			t.Fatalf("after 119 s: %d posts, want none yet", n)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if n := posts(h.fake, in.ID); n != 1 {
			t.Fatalf("after 120 s: %d posts, want 1", n)
		}
		if got := h.row(in.ID).State; got != hitl.SlackPosted {
			t.Errorf("row after posting: %s, want posted", got)
		}
		if got := len(h.eventsOf(hitl.EventNotified, in.ID)); got != 1 {
			t.Errorf("notified events: got %d, want 1", got)
		}
	})
}

func TestDelayPerInteraction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, harnessOptions{config: delayed(), inProcess: true})
		d := 10
		soon := h.ask(hitl.CreateRequest{Question: "soon", Notify: &hitl.Notify{Slack: &hitl.SlackNotify{DelaySeconds: &d}}})
		zero := 0
		now := h.ask(hitl.CreateRequest{Question: "now", Notify: &hitl.Notify{Slack: &hitl.SlackNotify{DelaySeconds: &zero}}})
		later := h.ask(hitl.CreateRequest{Question: "later"})
		synctest.Wait()
		if posts(h.fake, now.ID) != 1 || posts(h.fake, soon.ID) != 0 {
			t.Fatalf("at once: posts of now %d, soon %d; want 1, 0", posts(h.fake, now.ID), posts(h.fake, soon.ID))
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if posts(h.fake, soon.ID) != 1 || posts(h.fake, later.ID) != 0 {
			t.Fatalf("after 10 s: posts of soon %d, later %d; want 1, 0", posts(h.fake, soon.ID), posts(h.fake, later.ID))
		}
		time.Sleep(110 * time.Second)
		synctest.Wait()
		if posts(h.fake, later.ID) != 1 {
			t.Fatalf("after 120 s: posts of later %d, want 1", posts(h.fake, later.ID))
		}
	})
}

func TestDelayCancelledByEarlierAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, harnessOptions{config: delayed(), inProcess: true})
		answered := h.ask(hitl.CreateRequest{Question: "answered first"})
		cancelled := h.ask(hitl.CreateRequest{Question: "cancelled first"})
		waiting := h.ask(hitl.CreateRequest{Question: "still waiting"})
		time.Sleep(60 * time.Second)
		web := hitl.WithCaller(context.Background(), hitl.Caller{Name: "bob", Channel: hitl.ChannelWeb, Role: hitl.RoleResponder})
		if _, err := h.b.Respond(web, answered.ID, json.RawMessage(`"done"`)); err != nil {
			t.Fatal(err)
		}
		agent := hitl.WithCaller(context.Background(), hitl.Caller{Name: "agent", Channel: hitl.ChannelAPI, Role: hitl.RoleAgent})
		if _, err := h.b.Cancel(agent, cancelled.ID, ""); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		for _, id := range []string{answered.ID, cancelled.ID} {
			if got := h.row(id).State; got != hitl.SlackSkipped {
				t.Errorf("row of an interaction that ended before its delay: %s, want skipped", got)
			}
		}
		time.Sleep(120 * time.Second)
		synctest.Wait()
		if n := len(h.fake.Calls("chat.postMessage")); n != 1 || posts(h.fake, waiting.ID) != 1 {
			t.Fatalf("after the delay: %d posts, want only the waiting interaction's", n)
		}
		if n := len(h.fake.Calls("chat.update")); n != 0 {
			t.Errorf("%d messages updated, want none (nothing ended after posting)", n)
		}
	})
}

func TestDelaySurvivesRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := hitltest.SQLiteDB(t)
		fake := slackfake.NewUnstarted(t, nil)
		start := func() *harness {
			return newHarness(t, harnessOptions{config: delayed(), inProcess: true, db: db, fake: fake})
		}
		h := start()
		in := h.ask(hitl.CreateRequest{Question: "restart in the middle"})
		down := h.ask(hitl.CreateRequest{Question: "due while down"})
		time.Sleep(60 * time.Second)
		h.stop()

		// Back before the delay ends: posted when it does, once.
		h = start()
		synctest.Wait()
		if n := len(fake.Calls("chat.postMessage")); n != 0 {
			t.Fatalf("restarted at 60 s: %d posts, want none yet", n)
		}
		time.Sleep(59 * time.Second)
		synctest.Wait()
		if n := len(fake.Calls("chat.postMessage")); n != 0 {
			t.Fatalf("at 119 s: %d posts, want none yet", n)
		}
		h.stop() // down again, before the delay ends

		// Back after it: the rows that came due meanwhile are posted at
		// start-up, each once.
		time.Sleep(30 * time.Second)
		h = start()
		synctest.Wait()
		if posts(fake, in.ID) != 1 || posts(fake, down.ID) != 1 {
			t.Fatalf("restarted at 149 s: posts %d and %d, want 1 each", posts(fake, in.ID), posts(fake, down.ID))
		}
		h.stop()
		start()
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if n := len(fake.Calls("chat.postMessage")); n != 2 {
			t.Fatalf("after another restart: %d posts in all, want 2", n)
		}
	})
}

// TestTwoReplicasPostOnce starts two servers over one database that
// both find the same due rows at start-up: each message is posted once.
func TestTwoReplicasPostOnce(t *testing.T) {
	t.Parallel()
	db := hitltest.SQLiteDB(t)
	fake := slackfake.NewUnstarted(t, nil)
	off := httpConfig()
	off.Enabled = false
	h := newHarness(t, harnessOptions{config: off, db: db, fake: fake})
	const n = 40
	var ids []string
	for range n {
		ids = append(ids, h.ask(hitl.CreateRequest{}).ID)
	}
	h.stop()

	a := newHarness(t, harnessOptions{config: httpConfig(), db: db, fake: fake, noStart: true})
	b := newHarness(t, harnessOptions{config: httpConfig(), db: db, fake: fake, noStart: true})
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, r := range []*harness{a, b} {
		wg.Go(func() { errs[i] = r.s.Start(context.Background()) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("start: %v", err)
		}
	}
	for _, id := range ids {
		fake.WaitFor("chat.postMessage", 1, func(c slackfake.Call) bool { return strings.Contains(c.Blocks(), id) })
	}
	for _, id := range ids {
		if got := posts(fake, id); got != 1 {
			t.Errorf("interaction %s posted %d times, want once", id, got)
		}
	}
}
