package email_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

// A reminder mails the targets again: a second round, with links of its
// own that answer once, while the first mail's links still work until
// then. A step that adds people mails them only.
func TestEscalationMailsARoundWithFreshLinks(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	req := approval("Deploy build 1433?", &hitl.Targets{Users: []string{"alice"}})
	req.Escalation = []hitl.EscalationStep{
		{After: "1s", Remind: true, Channels: []string{hitl.ChannelEmail}},
		{After: "4s", AddTargets: &hitl.Targets{Users: []string{"bob"}}},
	}
	in := h.ask(req)

	mails := h.box.wait(3) // the first mail, the reminder, then bob when he is added
	first, reminder := parse(t, mails[0]), parse(t, mails[1])
	if strings.Contains(first.subject, "Reminder") || !strings.Contains(reminder.subject, "Reminder: Deploy build 1433?") || reminder.to != "<alice@example.com>" {
		t.Fatalf("first %q, reminder %q to %s; want a plain first mail, then a reminder to alice", first.subject, reminder.subject, reminder.to)
	}
	if added := mails[2].to; !slices.Equal(added, []string{"bob@example.com"}) {
		t.Errorf("the step that adds bob mailed %v, want bob only", added)
	}
	if got := h.get(in.ID); !slices.Equal(got.Targets.Users, []string{"alice", "bob"}) {
		t.Errorf("targets after the steps: %+v, want alice and bob", got.Targets)
	}
	fresh := reminder.links()
	if len(fresh) != 2 || slices.Contains(first.links(), fresh[0]) {
		t.Fatalf("reminder links %v: want two, none of the first mail's %v", fresh, first.links())
	}
	p := fetch(t, http.MethodPost, fresh[0])
	if p.status != http.StatusOK || !strings.Contains(p.body, "Recorded: Approve") {
		t.Fatalf("POST the reminder's approve: %d\n%s", p.status, p.body)
	}
	if got := h.get(in.ID); got.Status != hitl.StatusAnswered || got.Result.RespondedBy != "alice" {
		t.Fatalf("after the reminder's link: %s %+v, want answered by alice", got.Status, got.Result)
	}
	if p := fetch(t, http.MethodPost, fresh[0]); p.status != http.StatusConflict {
		t.Errorf("the reminder's link again: %d, want 409", p.status)
	}
}

// A step that fired while no server ran email (one that stopped between
// firing the step and mailing, say) still mails its round once email
// runs: the step's row is written with its event.
func TestEscalationMailsAStepFiredWhileEmailWasDown(t *testing.T) {
	h := newHarness(t, harnessOptions{noStart: true})
	req := approval("Rotate the signing key?", &hitl.Targets{Users: []string{"alice"}})
	req.Escalation = []hitl.EscalationStep{{After: "1s", Remind: true, Channels: []string{hitl.ChannelEmail}}}
	in := h.ask(req)
	deadline := time.Now().Add(30 * time.Second)
	for !slices.Contains(h.get(in.ID).EscalatedSteps, 0) {
		if time.Now().After(deadline) {
			t.Fatal("the step did not fire")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := h.svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	mails := h.box.wait(2) // the first mail (the sweep), then the step's
	var reminders int
	for _, m := range mails {
		if p := parse(t, m); strings.Contains(p.subject, "Reminder: Rotate the signing key?") && p.to == "<alice@example.com>" {
			reminders++
		}
	}
	if reminders != 1 {
		t.Errorf("%d reminders to alice, want 1", reminders)
	}
}
