package slack

import (
	"context"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
)

// TestActionAlwaysAllowRisky: for an action marked risky, the Always
// allow modal asks for a ticked confirmation that names the risks; a
// submission without it keeps the modal open and records nothing; with
// it, the call is approved and the rule made.
func TestActionAlwaysAllowRisky(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	in := h.askAction("Bash", `{"command":"sudo systemctl restart nginx"}`, nil)
	if !in.Action.Risky() {
		t.Fatalf("sudo is not marked risky: %+v", in.Action.Risks)
	}
	post, _ := h.waitPosted(in)
	view := h.openModal(post, "Always allow")
	box, ok := modalInputs(t, view)[blockConfirmRisky]
	if !ok {
		t.Fatalf("the Always allow modal of a risky call has no confirmation: %s", mustJSON(t, view["blocks"]))
	}
	if label := mustJSON(t, box["label"]); !strings.Contains(label, "Marked risky: runs as root (sudo)") {
		t.Errorf("the confirmation's label %s does not name the risk", label)
	}
	if box["optional"] == true {
		t.Error("the confirmation is optional")
	}
	fields := map[string]any{blockScope: selected("radio_buttons", scopePattern), blockPattern: text("sudo systemctl"), blockExpiry: selected("static_select", "86400")}
	wantModalError(t, h.submit(view, fields), blockConfirmRisky, "Tick the box to confirm")
	fields[blockConfirmRisky] = input("checkboxes", "selected_options", []any{})
	wantModalError(t, h.submit(view, fields), blockConfirmRisky, "Tick the box to confirm")
	if got := h.get(in.ID).Status; got != hitl.StatusPending {
		t.Fatalf("after unconfirmed submissions: %s, want pending", got)
	}
	if rules, _, _ := h.store.Rules(context.Background(), hitl.RuleFilter{}); len(rules) != 0 {
		t.Fatalf("%d rules made without the confirmation", len(rules))
	}

	fields[blockConfirmRisky] = input("checkboxes", "selected_options", []any{map[string]any{"value": confirmRiskyValue}})
	if body := h.submit(view, fields); body != "" {
		t.Fatalf("confirmed: response %s", body)
	}
	wantResult(t, h.waitEnded(in.ID), `{"decision":"approve"}`, "alice")
	rules, _, err := h.store.Rules(context.Background(), hitl.RuleFilter{CreatedBy: "alice"})
	if err != nil || len(rules) != 1 || rules[0].Match == nil || rules[0].Match.Prefix != "sudo systemctl" {
		t.Fatalf("rules: %+v, %v; want one on the prefix sudo systemctl", rules, err)
	}

	// A plain call's modal asks nothing more.
	plain := h.askAction("Bash", `{"command":"git status -s"}`, nil)
	post, _ = h.waitPosted(plain)
	if _, ok := modalInputs(t, h.openModal(post, "Always allow"))[blockConfirmRisky]; ok {
		t.Error("a plain call's Always allow modal asks to confirm a risk")
	}
}
