package slack

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/slackfake"
)

// TestPostgresReplicas runs two servers over one PostgreSQL database:
// each hears of the other's interactions, both arm their timers for the
// same rows, and each message is still posted once and updated once.
func TestPostgresReplicas(t *testing.T) {
	t.Parallel()
	db := hitltest.PostgresDB(t) // skips without PostgreSQL
	fake := slackfake.NewUnstarted(t, nil)
	cfg := httpConfig()
	cfg.DelaySeconds = 1
	a := newHarness(t, harnessOptions{config: cfg, db: db, fake: fake})
	b := newHarness(t, harnessOptions{config: cfg, db: db, fake: fake})

	const n = 10
	var ids []string
	for range n {
		ids = append(ids, a.ask(hitl.CreateRequest{Type: hitl.TypeApproval}).ID)
	}
	for _, id := range ids {
		b.waitEvent(hitl.EventNotified, id) // B hears of A's posts too
	}
	// Answer all on B: the messages A or B posted are updated once each.
	web := hitl.WithCaller(context.Background(), hitl.Caller{Name: "bob", Channel: hitl.ChannelWeb, Role: hitl.RoleResponder})
	for _, id := range ids {
		if _, err := b.b.Respond(web, id, json.RawMessage(`true`)); err != nil {
			t.Fatalf("respond: %v", err)
		}
	}
	fake.WaitFor("chat.update", n, nil)
	a.stop()
	b.stop() // both done: nothing in flight
	for _, id := range ids {
		if got := posts(fake, id); got != 1 {
			t.Errorf("interaction %s posted %d times, want once", id, got)
		}
		updates := 0
		for _, c := range fake.Calls("chat.update") {
			if strings.Contains(c.Blocks(), id) {
				updates++
			}
		}
		if updates != 1 {
			t.Errorf("interaction %s updated %d times, want once", id, updates)
		}
	}
}

// TestPostgresAlwaysAllow: a rule made with Always allow through one
// replica's Slack decides the next identical action asked of another at
// once, and the updated message names it.
func TestPostgresAlwaysAllow(t *testing.T) {
	t.Parallel()
	db := hitltest.PostgresDB(t) // skips without PostgreSQL
	fake := slackfake.NewUnstarted(t, nil)
	a := newHarness(t, harnessOptions{config: httpConfig(), db: db, fake: fake})
	b := newHarness(t, harnessOptions{config: httpConfig(), db: db, fake: fake})
	withUsers(t, a)

	in := a.askAction("Write", `{"file_path":"/repo/src/main.go","content":"package main\n"}`, nil)
	post, _ := a.waitPosted(in)
	view := a.openModal(post, "Always allow")
	if body := a.submit(view, map[string]any{blockScope: selected("radio_buttons", scopePattern), blockPattern: text("/repo/src/**"),
		blockExpiry: selected("static_select", "0")}); body != "" {
		t.Fatalf("always allow: %s", body)
	}
	wantResult(t, a.waitEnded(in.ID), `{"decision":"approve"}`, "alice")
	upd := a.waitUpdated(in)
	if !strings.Contains(upd.Blocks(), "🔁 From now on allowed without asking: `file_path` matching `/repo/src/**` (rule `") {
		t.Errorf("updated message does not name the rule:\n%s", upd.Blocks())
	}
	next := b.askAction("Write", `{"file_path":"/repo/src/util/x.go","content":"package util\n"}`, nil)
	if next.Status != hitl.StatusAnswered || next.Result.Channel != hitl.ChannelRule || next.Result.RuleID == "" {
		t.Errorf("the next call, on the other replica: status %s, result %+v; want answered by the rule", next.Status, next.Result)
	}
}
