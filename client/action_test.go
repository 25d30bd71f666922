package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/hitltest"
)

// TestClientCarriesActions: an action's fields go to the server and come
// back, and the answer's args_diff and rule_id with them.
func TestClientCarriesActions(t *testing.T) {
	t.Parallel()
	srv := hitltest.Start(t, nil)
	c := client.New(srv.URL, nil)
	ctx := context.Background()
	req := hitl.CreateRequest{
		Type:                  hitl.TypeAction,
		SourceAgent:           "claude-code",
		Action:                &hitl.Action{Name: "Write", Args: json.RawMessage(`{"file_path":"src/a.go","content":"x && y"}`), Description: "write a"},
		ArgsSchema:            json.RawMessage(`{"type":"object","required":["file_path"]}`),
		Decisions:             []hitl.Decision{hitl.DecisionApprove, hitl.DecisionEdit, hitl.DecisionReject},
		RejectRequiresMessage: true,
	}
	in := mustCreate(t, c, req)
	if in.Action == nil || in.Action.Name != "Write" || !hitl.JSONEqual(in.Action.Args, req.Action.Args) || in.Action.Description != "write a" ||
		!slices.Equal(in.Decisions, req.Decisions) || !in.RejectRequiresMessage || string(in.ArgsSchema) != string(req.ArgsSchema) {
		t.Fatalf("created: %+v (action %+v)", in, in.Action)
	}
	got, err := c.Respond(ctx, in.ID, json.RawMessage(`{"decision":"edit","args":{"file_path":"src/b.go","content":"x && y"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Result.ArgsDiff) != `[{"op":"replace","path":"/file_path","value":"src/b.go"}]` {
		t.Errorf("args_diff: %s", got.Result.ArgsDiff)
	}
	// The same request again (an idempotent repeat) is the same interaction.
	req.IdempotencyKey = "toolu_01"
	first := mustCreate(t, c, req)
	again, created, err := c.Create(ctx, req)
	if err != nil || created || again.ID != first.ID {
		t.Errorf("repeat: %v %v %v", again, created, err)
	}
	req.Decisions = []hitl.Decision{hitl.DecisionApprove}
	if _, _, err := c.Create(ctx, req); !errors.Is(err, hitl.ErrConflict) {
		t.Errorf("same key, other decisions: %v, want a conflict", err)
	}
}

func TestClientRules(t *testing.T) {
	t.Parallel()
	srv := hitltest.Start(t, nil)
	c := client.New(srv.URL, nil)
	ctx := context.Background()
	r, err := c.CreateRule(ctx, hitl.RuleRequest{Effect: hitl.RuleAllow, SourceAgent: "claude-code", ActionName: "Write",
		Match: &hitl.RuleMatch{Arg: "file_path", Glob: "src/**"}, TTLSeconds: 3600})
	if err != nil {
		t.Fatal(err)
	}
	if r.ExpiresAt == nil || r.ExpiresAt.Sub(r.CreatedAt) != time.Hour || r.Match.Glob != "src/**" {
		t.Errorf("rule: %+v", r)
	}
	in := mustCreate(t, c, hitl.CreateRequest{Type: hitl.TypeAction, SourceAgent: "claude-code",
		Action: &hitl.Action{Name: "Write", Args: json.RawMessage(`{"file_path":"src/x/y.go"}`)}})
	if in.Status != hitl.StatusAnswered || in.Result.RuleID != r.ID {
		t.Errorf("the rule's answer: %s %+v", in.Status, in.Result)
	}
	list, next, err := c.Rules(ctx, hitl.RuleFilter{ActiveAt: time.Now(), ActionName: "Write"})
	if err != nil || len(list) != 1 || next != "" {
		t.Errorf("Rules: %v %q %v", list, next, err)
	}
	if got, err := c.Rule(ctx, r.ID); err != nil || got.ID != r.ID {
		t.Errorf("Rule: %v %v", got, err)
	}
	revoked, err := c.RevokeRule(ctx, r.ID)
	if err != nil || revoked.RevokedAt == nil {
		t.Errorf("RevokeRule: %v %v", revoked, err)
	}
	if _, err := c.RevokeRule(ctx, "nope"); !errors.Is(err, hitl.ErrNotFound) {
		t.Errorf("revoke unknown: %v", err)
	}
	if _, err := c.CreateRule(ctx, hitl.RuleRequest{Effect: "maybe"}); !errors.Is(err, hitl.ErrInvalid) {
		t.Errorf("bad rule: %v", err)
	}
	if _, err := c.Rule(ctx, ""); !errors.Is(err, hitl.ErrInvalid) {
		t.Errorf("empty id: %v", err)
	}
}
