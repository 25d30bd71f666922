package slack

import (
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
)

// Slack users of people who sign in through an OpenID provider.
const (
	slackDana = "UDANA001"
	slackEve  = "UEVE0001"
)

// providerSignIn records a sign-in through the provider, as the server
// does after verifying the ID token: the provider's groups become the
// person's hitl groups.
func providerSignIn(t *testing.T, h *harness, email, sub string, groups ...string) {
	t.Helper()
	if groups == nil {
		groups = []string{}
	}
	_, err := h.store.SignInUser(t.Context(), &hitl.User{Name: email, Email: email, Groups: groups,
		Issuer: "https://id.example.com", Subject: sub})
	if err != nil {
		t.Fatal(err)
	}
}

// TestProviderGroupInSlack: a question for a provider's group is answered
// in Slack by a person the provider put in it, matched by the email
// Slack's users.info gives, and recorded as that person; someone outside
// it is told they are not a responder; once the provider takes the group
// away (at the next sign-in), so does Slack; a disabled person is refused
// even on a question for anyone.
func TestProviderGroupInSlack(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	providerSignIn(t, h, "dana@example.com", "sub-dana", "sre")
	providerSignIn(t, h, "eve@example.com", "sub-eve", "marketing")
	h.fake.SetUser(slackDana, "Dana@Example.com")
	h.fake.SetUser(slackEve, "eve@example.com")

	in := h.ask(hitl.CreateRequest{Type: hitl.TypeApproval, Targets: &hitl.Targets{Groups: []string{"sre"}}})
	post, _ := h.waitPosted(in)
	approve := actionIDs(t, post)["Approve"]
	h.interact(click(slackEve, post, approve, nil))
	eph := h.fake.WaitFor("chat.postEphemeral", 1, nil)[0]
	if eph.Form.Get("user") != slackEve || !strings.Contains(eph.Form.Get("text"), "not a responder for this question") {
		t.Errorf("eve (marketing) on a question for sre: got ephemeral %v", eph.Form)
	}
	if got := h.get(in.ID).Status; got != hitl.StatusPending {
		t.Fatalf("after eve's refused click: %s, want pending", got)
	}
	h.interact(click(slackDana, post, approve, nil))
	wantResult(t, h.waitEnded(in.ID), "true", "dana@example.com")

	// The provider took sre away from dana; she signed in again since.
	providerSignIn(t, h, "dana@example.com", "sub-dana")
	again := h.ask(hitl.CreateRequest{Type: hitl.TypeApproval, Targets: &hitl.Targets{Groups: []string{"sre"}}})
	post, _ = h.waitPosted(again)
	h.interact(click(slackDana, post, actionIDs(t, post)["Approve"], nil))
	eph = h.fake.WaitFor("chat.postEphemeral", 2, nil)[1]
	if eph.Form.Get("user") != slackDana || !strings.Contains(eph.Form.Get("text"), "not a responder for this question") {
		t.Errorf("dana after losing sre: got ephemeral %v", eph.Form)
	}
	if got := h.get(again.ID).Status; got != hitl.StatusPending {
		t.Fatalf("after dana's refused click: %s, want pending", got)
	}

	// Disabled: not even a question for anyone.
	if err := h.store.SetUserDisabled(t.Context(), "dana@example.com", true); err != nil {
		t.Fatal(err)
	}
	open := h.ask(hitl.CreateRequest{Type: hitl.TypeApproval})
	post, _ = h.waitPosted(open)
	h.interact(click(slackDana, post, actionIDs(t, post)["Approve"], nil))
	eph = h.fake.WaitFor("chat.postEphemeral", 3, nil)[2]
	if !strings.Contains(eph.Form.Get("text"), "disabled") {
		t.Errorf("a disabled person: got ephemeral %v", eph.Form)
	}
	if got := h.get(open.ID).Status; got != hitl.StatusPending {
		t.Fatalf("after a disabled person's click: %s, want pending", got)
	}
}
