package broker_test

import (
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
)

// countingIssuer signs every approved action's receipt as "receipt:<id>"
// and counts the signatures.
type countingIssuer struct{ signed atomic.Int64 }

func (c *countingIssuer) IssueReceipt(in *hitl.Interaction) (string, error) {
	if _, ok := in.ApprovedAction(); !ok {
		return "", nil
	}
	c.signed.Add(1)
	return "receipt:" + in.ID, nil
}

// TestUnreceiptedSignsNothing: the broker's receipt-less view decides, waits
// for and answers actions as the broker does, without signing a receipt;
// the broker itself still gives every approved action its receipt.
func TestUnreceiptedSignsNothing(t *testing.T) {
	t.Parallel()
	issuer := &countingIssuer{}
	b := newBroker(t, &broker.Options{Receipts: issuer})
	if _, err := b.CreateRule(root, hitl.RuleRequest{Effect: hitl.RuleAllow, SourceAgent: "*", ActionName: "Bash",
		Match: &hitl.RuleMatch{Arg: "command", Prefix: "git status"}}); err != nil {
		t.Fatal(err)
	}
	view := b.Unreceipted()

	byRule, _, err := view.Create(buildBot, bash("git status"))
	if err != nil {
		t.Fatal(err)
	}
	if byRule.Status != hitl.StatusAnswered || byRule.Result.Receipt != "" {
		t.Errorf("a rule's approval through the view: %s, receipt %q; want answered, none", byRule.Status, byRule.Result.Receipt)
	}
	pending, _, err := view.Create(buildBot, bash("make deploy"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Respond(bob, pending.ID, json.RawMessage(`{"decision":"approve"}`)); err != nil {
		t.Fatal(err)
	}
	signed := issuer.signed.Load() // the person's answer, through the broker
	for name, read := range map[string]func() (*hitl.Interaction, error){
		"Get":  func() (*hitl.Interaction, error) { return view.Get(buildBot, pending.ID) },
		"Wait": func() (*hitl.Interaction, error) { return view.Wait(buildBot, pending.ID) },
		"List": func() (*hitl.Interaction, error) {
			list, _, err := view.List(buildBot, hitl.ListFilter{})
			if err != nil || len(list) != 2 {
				return nil, err
			}
			return list[0], nil
		},
	} {
		in, err := read()
		if err != nil || in == nil {
			t.Fatalf("%s through the view: %v", name, err)
		}
		if in.Status != hitl.StatusAnswered || in.Result.Receipt != "" {
			t.Errorf("%s through the view: %s, receipt %q; want answered, none", name, in.Status, in.Result.Receipt)
		}
	}
	if n := issuer.signed.Load(); n != signed {
		t.Errorf("the view signed %d receipts, want none", n-signed)
	}

	got, err := b.Get(buildBot, byRule.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Result.Receipt != "receipt:"+byRule.ID {
		t.Errorf("the broker's read of a rule's approval: receipt %q", got.Result.Receipt)
	}
	again, _, err := b.Create(buildBot, bash("git status"))
	if err != nil {
		t.Fatal(err)
	}
	if again.Result.Receipt != "receipt:"+again.ID {
		t.Errorf("the broker's create decided by a rule: receipt %q", again.Result.Receipt)
	}
}
