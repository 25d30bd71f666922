package slack

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/slackfake"
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
	if !strings.Contains(post.Blocks(), "0 of 2 approvals") {
		t.Errorf("posted message does not show the tally: %s", post.Blocks())
	}
	person := func(name string) context.Context {
		return hitl.WithCaller(context.Background(), hitl.Caller{Name: name, Channel: hitl.ChannelWeb, Role: hitl.RoleResponder})
	}
	if _, err := h.b.Respond(person("alice"), in.ID, json.RawMessage(`true`)); err != nil {
		t.Fatal(err)
	}
	upd := h.fake.WaitFor("chat.update", 1, func(c slackfake.Call) bool { return strings.Contains(c.Blocks(), "1 of 2 approvals") })[0]
	if !strings.Contains(upd.Blocks(), "*alice* approved") || !strings.Contains(upd.Blocks(), "hitl_actions") {
		t.Errorf("update after alice's vote: want her vote and the buttons still there: %s", upd.Blocks())
	}
	if _, err := h.b.Claim(person("bob"), in.ID, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	h.fake.WaitFor("chat.update", 1, func(c slackfake.Call) bool { return strings.Contains(c.Blocks(), "*bob* is on it") })
	if _, err := h.b.Respond(person("carol"), in.ID, json.RawMessage(`"approve"`)); err != nil {
		t.Fatal(err)
	}
	h.waitEnded(in.ID)
	ended := h.fake.WaitFor("chat.update", 1, func(c slackfake.Call) bool {
		return strings.Contains(c.Blocks(), "Approved") && !strings.Contains(c.Blocks(), "hitl_actions")
	})[0]
	if b := ended.Blocks(); !strings.Contains(b, "2 of 2 approvals") || !strings.Contains(b, "*carol* approved") {
		t.Errorf("outcome does not list the votes: %s", b)
	}
}
