package slack

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

// TestMessageShowsVotesAndClaims: a posted approval that needs two
// approvals is updated as alice votes and bob claims it, and its outcome
// lists both votes.
func TestMessageShowsVotesAndClaims(t *testing.T) {
	h := newHarness(t, harnessOptions{config: httpConfig()})
	for _, name := range []string{"alice", "bob", "carol"} {
		if err := h.store.CreateUser(context.Background(), &hitl.User{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	in := h.ask(hitl.CreateRequest{Type: hitl.TypeApproval, Timeout: 600, Consensus: &hitl.Consensus{Mode: hitl.ModeQuorum, Required: 2}})
	post, _ := h.waitPosted(in)
	if !strings.Contains(post.blocks(), "0 of 2 approvals") {
		t.Errorf("posted message does not show the tally: %s", post.blocks())
	}
	person := func(name string) context.Context {
		return hitl.WithCaller(context.Background(), hitl.Caller{Name: name, Channel: hitl.ChannelWeb, Role: hitl.RoleResponder})
	}
	if _, err := h.b.Respond(person("alice"), in.ID, json.RawMessage(`true`)); err != nil {
		t.Fatal(err)
	}
	upd := h.fake.waitFor("chat.update", 1, func(c apiCall) bool { return strings.Contains(c.blocks(), "1 of 2 approvals") })[0]
	if !strings.Contains(upd.blocks(), "*alice* approved") || !strings.Contains(upd.blocks(), "hitl_actions") {
		t.Errorf("update after alice's vote: want her vote and the buttons still there: %s", upd.blocks())
	}
	if _, err := h.b.Claim(person("bob"), in.ID, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	h.fake.waitFor("chat.update", 1, func(c apiCall) bool { return strings.Contains(c.blocks(), "*bob* is on it") })
	if _, err := h.b.Respond(person("carol"), in.ID, json.RawMessage(`"approve"`)); err != nil {
		t.Fatal(err)
	}
	h.waitEnded(in.ID)
	ended := h.fake.waitFor("chat.update", 1, func(c apiCall) bool {
		return strings.Contains(c.blocks(), "Approved") && !strings.Contains(c.blocks(), "hitl_actions")
	})[0]
	if b := ended.blocks(); !strings.Contains(b, "2 of 2 approvals") || !strings.Contains(b, "*carol* approved") {
		t.Errorf("outcome does not list the votes: %s", b)
	}
}
