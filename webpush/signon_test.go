package webpush_test

import (
	"testing"

	"github.com/hitl-sh/hitl"
)

// TestPushReachesProviderGroup: a question for a provider's group is
// pushed to the browsers of the people the provider put in it, as of
// their last sign-in; one whose group was taken away is not pushed to.
func TestPushReachesProviderGroup(t *testing.T) {
	h := newHarness(t)
	for _, u := range []*hitl.User{
		{Name: "erin@example.com", Groups: []string{"sre"}, Subject: "sub-erin"},
		{Name: "gina@example.com", Groups: []string{"sre"}, Subject: "sub-gina"},
		{Name: "gina@example.com", Groups: []string{"marketing"}, Subject: "sub-gina"}, // the provider moved her
	} {
		u.Issuer = "https://id.example.com"
		if _, err := h.store.SignInUser(t.Context(), u); err != nil {
			t.Fatal(err)
		}
	}
	erin, gina := h.push.browser("erin"), h.push.browser("gina")
	h.subscribe("erin@example.com", erin, false)
	h.subscribe("gina@example.com", gina, false)

	in := h.ask(hitl.CreateRequest{Question: "Fail over?", Timeout: 600, Targets: &hitl.Targets{Groups: []string{"sre"}}})
	if d := h.next(); d.browser != "erin" || d.payload.ID != in.ID {
		t.Fatalf("a question for sre was pushed to %s; want erin", d.browser)
	}
	waitEvent(t, h, in.ID, "pushed to erin@example.com")
	select {
	case d := <-h.push.got:
		t.Fatalf("an extra push to %s (%s)", d.browser, d.payload.Question)
	default:
	}
}
