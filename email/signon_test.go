package email_test

import (
	"net/http"
	"testing"

	"github.com/hitl-sh/hitl"
)

// TestProviderGroupIsMailed: a question for a provider's group is mailed
// to the people the provider put in it, as of their last sign-in (not to
// one whose group was taken away, nor to a disabled one), and an answer by
// mail is recorded as that person.
func TestProviderGroupIsMailed(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	signIn := func(email, sub string, groups ...string) {
		t.Helper()
		if groups == nil {
			groups = []string{}
		}
		if _, err := h.store.SignInUser(t.Context(), &hitl.User{Name: email, Email: email, Groups: groups,
			Issuer: "https://id.example.com", Subject: sub}); err != nil {
			t.Fatal(err)
		}
	}
	signIn("erin@example.com", "sub-erin", "sre")
	signIn("frank@example.com", "sub-frank", "sre")
	signIn("gina@example.com", "sub-gina", "sre")
	signIn("gina@example.com", "sub-gina", "marketing") // the provider moved her
	if err := h.store.SetUserDisabled(t.Context(), "frank@example.com", true); err != nil {
		t.Fatal(err)
	}

	in := h.ask(approval("Fail over the database?", &hitl.Targets{Groups: []string{"sre"}}))
	got := h.box.wait(1)
	if len(got) != 1 || got[0].to[0] != "erin@example.com" {
		var to []string
		for _, r := range got {
			to = append(to, r.to...)
		}
		t.Fatalf("mailed %v; want erin alone", to)
	}
	mail := parse(t, got[0])
	if p := fetch(t, http.MethodPost, mail.links()[0]); p.status != http.StatusOK {
		t.Fatalf("POST the approve link: %d\n%s", p.status, p.body)
	}
	if r := h.get(in.ID).Result; r == nil || r.RespondedBy != "erin@example.com" || r.Channel != "email" {
		t.Errorf("result %+v; want answered by erin@example.com via email", r)
	}
	if n := len(h.box.all()); n != 1 {
		t.Errorf("mails sent: %d, want 1", n)
	}
}
