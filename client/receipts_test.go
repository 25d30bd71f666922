package client_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/hitltest"
)

// TestReceiptsOfEachApproval: a rule's approval and a person's edit carry
// receipts that bind who approved and the arguments to run; a reject
// carries none.
func TestReceiptsOfEachApproval(t *testing.T) {
	t.Parallel()
	srv := hitltest.Start(t, nil)
	c := client.New(srv.URL, nil)
	ctx := context.Background()
	r, err := c.CreateRule(ctx, hitl.RuleRequest{Effect: hitl.RuleAllow, SourceAgent: "codex", ActionName: "Read"})
	if err != nil {
		t.Fatal(err)
	}
	byRule := mustCreate(t, c, hitl.CreateRequest{Type: hitl.TypeAction, SourceAgent: "codex",
		Action: &hitl.Action{Name: "Read", Args: json.RawMessage(`{"path":"a.txt"}`)}})
	claims, err := c.VerifyReceipt(ctx, byRule.Result.Receipt, hitl.ReceiptExpectation{InteractionID: byRule.ID, Name: "Read", Args: json.RawMessage(`{"path":"a.txt"}`)})
	if err != nil {
		t.Fatalf("a rule's approval: %v", err)
	}
	if claims.ApprovedBy != "rule:"+r.ID || claims.Agent != "codex" {
		t.Errorf("a rule's approval: claims %+v", claims)
	}

	edit := mustCreate(t, c, hitl.CreateRequest{Type: hitl.TypeAction, SourceAgent: "codex",
		Action: &hitl.Action{Name: "Write", Args: json.RawMessage(`{"path":"a.txt"}`)}})
	edited, err := c.Respond(ctx, edit.ID, json.RawMessage(`{"decision":"edit","args":{"path":"b.txt"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.VerifyReceipt(ctx, edited.Result.Receipt, hitl.ReceiptExpectation{Args: json.RawMessage(`{"path":"b.txt"}`)}); err != nil {
		t.Errorf("an edit, with the edited args: %v", err)
	}
	if _, err := c.VerifyReceipt(ctx, edited.Result.Receipt, hitl.ReceiptExpectation{Args: json.RawMessage(`{"path":"a.txt"}`)}); err == nil || !strings.Contains(err.Error(), "other args") {
		t.Errorf("an edit, with the proposed args: %v; want other args", err)
	}

	reject := mustCreate(t, c, hitl.CreateRequest{Type: hitl.TypeAction, SourceAgent: "codex",
		Action: &hitl.Action{Name: "Write", Args: json.RawMessage(`{"path":"c.txt"}`)}})
	rejected, err := c.Respond(ctx, reject.ID, json.RawMessage(`{"decision":"reject","message":"no"}`))
	if err != nil {
		t.Fatal(err)
	}
	if rejected.Result.Receipt != "" {
		t.Errorf("a rejected action has a receipt")
	}
	if got, err := c.Get(ctx, reject.ID); err != nil || got.Result.Receipt != "" {
		t.Errorf("a rejected action, read again: %v, receipt %q", err, got.Result.Receipt)
	}
}
