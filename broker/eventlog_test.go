package broker_test

import (
	"context"
	"slices"
	"testing"

	"github.com/hitl-sh/hitl"
)

// TestEventsAsTheCaller reads the event log as different callers: each is
// given only the events of the interactions it may see, and the position
// read through, so that paging goes on past events it may not see.
func TestEventsAsTheCaller(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	ctx := context.Background()
	start, err := b.LastEventSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(ctx context.Context, targets *hitl.Targets) *hitl.Interaction {
		t.Helper()
		in, _, err := b.Create(ctx, hitl.CreateRequest{Question: "Deploy?", Timeout: 600, Targets: targets})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		return in
	}
	toAlice := ask(buildBot, &hitl.Targets{Users: []string{"alice"}})
	toOps := ask(otherBot, &hitl.Targets{Groups: []string{"ops"}})
	open := ask(buildBot, nil)
	if _, err := b.Cancel(otherBot, toOps.ID, ""); err != nil {
		t.Fatal(err)
	}
	rule, err := b.CreateRule(root, hitl.RuleRequest{Effect: hitl.RuleAllow, SourceAgent: "build-bot", ActionName: "deploy"})
	if err != nil {
		t.Fatal(err)
	}
	last, err := b.LastEventSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if last != start+5 {
		t.Fatalf("LastEventSeq %d, want %d (three created, one cancelled, one rule)", last, start+5)
	}

	tests := []struct {
		name string
		ctx  context.Context
		want []string // interaction of each event, in order
	}{
		{"Admin", root, []string{toAlice.ID, toOps.ID, open.ID, toOps.ID}},
		{"InProcess", hitl.WithCaller(ctx, hitl.Caller{}), []string{toAlice.ID, toOps.ID, open.ID, toOps.ID}},
		{"Creator", buildBot, []string{toAlice.ID, open.ID}},
		{"OtherAgent", otherBot, []string{toOps.ID, toOps.ID}},
		{"Target", alice, []string{toAlice.ID, open.ID}},
		{"GroupMember", bob, []string{toOps.ID, open.ID, toOps.ID}},
		{"Anonymous", hitl.WithCaller(ctx, hitl.Caller{Role: "none"}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One event a page: pages of events the caller may not see
			// come back empty, and the walk goes on.
			var got []string
			after := start
			for range 10 {
				evs, through, err := b.Events(tt.ctx, after, 1)
				if err != nil {
					t.Fatal(err)
				}
				if through == after {
					break
				}
				if through != after+1 {
					t.Fatalf("read through %d after %d with a page of one, want %d", through, after, after+1)
				}
				for _, ev := range evs {
					if ev.Interaction == nil {
						t.Fatalf("event %d (%s) given without its interaction", ev.Seq, ev.Type)
					}
					got = append(got, ev.Interaction.ID)
				}
				after = through
			}
			if after != last {
				t.Errorf("walk ended at %d, want the last event %d", after, last)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("events of %v, want %v", got, tt.want)
			}
		})
	}
	// The rule's event belongs to no interaction: no stream is told.
	evs, through, err := b.Events(root, last-1, 10)
	if err != nil || through != last || len(evs) != 0 {
		t.Errorf("after %d as admin: %d events through %d (%v), want none through %d (rule %s)", last-1, len(evs), through, err, last, rule.ID)
	}
}

// TestCountsAndHealth: counts of every interaction are for admins and
// in-process code; the store's health and the purge position are there
// for anyone.
func TestCountsAndHealth(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	ctx := context.Background()
	for range 3 {
		mustCreate(t, b, approval())
	}
	for _, c := range []context.Context{ctx, root, hitl.WithCaller(ctx, hitl.Caller{})} {
		if n, err := b.CountInteractions(c, hitl.StatusPending); err != nil || n != 3 {
			t.Errorf("CountInteractions as %s: %d (%v), want 3", hitl.CallerFrom(c).Name, n, err)
		}
	}
	for _, c := range []context.Context{buildBot, alice} {
		if _, err := b.CountInteractions(c, hitl.StatusPending); code(err) != hitl.EFORBIDDEN {
			t.Errorf("CountInteractions as %s: %v, want forbidden", hitl.CallerFrom(c).Name, err)
		}
	}
	if _, err := b.CountInteractions(root, "waiting"); code(err) != hitl.EINVALID {
		t.Errorf("CountInteractions of an unknown status: %v, want invalid", err)
	}
	if err := b.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
	if p, err := b.PurgedThrough(ctx); err != nil || p != 0 {
		t.Errorf("PurgedThrough before any purge: %d (%v), want 0", p, err)
	}
}
