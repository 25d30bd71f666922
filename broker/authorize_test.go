package broker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

// as returns a context carrying a caller with the given role.
func as(name string, role hitl.Role, groups ...string) context.Context {
	return hitl.WithCaller(context.Background(), hitl.Caller{Name: name, Role: role, Channel: hitl.ChannelAPI, Groups: groups})
}

var (
	buildBot = as("build-bot", hitl.RoleAgent)
	otherBot = as("other-bot", hitl.RoleAgent)
	alice    = as("alice", hitl.RoleResponder)
	bob      = as("bob", hitl.RoleResponder, "ops")
	root     = as("root", hitl.RoleAdmin)
)

// code returns err's application error code ("" for nil).
func code(err error) string { return hitl.ErrorCode(err) }

func TestAuthorizeEveryMethod(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	ask := func(ctx context.Context, targets *hitl.Targets) *hitl.Interaction {
		t.Helper()
		in, _, err := b.Create(ctx, hitl.CreateRequest{Question: "Deploy?", Timeout: 600, Targets: targets})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		return in
	}
	toAlice := ask(buildBot, &hitl.Targets{Users: []string{"alice"}})
	toOps := ask(otherBot, &hitl.Targets{Groups: []string{"ops"}})
	open := ask(buildBot, nil)

	if _, _, err := b.Create(alice, hitl.CreateRequest{Question: "Hi?"}); code(err) != hitl.EFORBIDDEN {
		t.Errorf("responder creates: got %v, want forbidden", err)
	}

	gets := []struct {
		name string
		ctx  context.Context
		in   *hitl.Interaction
		want string
	}{
		{"CreatorGets", buildBot, toAlice, ""},
		{"OtherAgentGets", otherBot, toAlice, hitl.ENOTFOUND},
		{"TargetGets", alice, toAlice, ""},
		{"NonTargetGets", bob, toAlice, hitl.ENOTFOUND},
		{"GroupMemberGets", bob, toOps, ""},
		{"AnyResponderGetsUntargeted", bob, open, ""},
		{"AdminGets", root, toOps, ""},
	}
	for _, tt := range gets {
		if _, err := b.Get(tt.ctx, tt.in.ID); code(err) != tt.want {
			t.Errorf("%s: Get: got %v, want code %q", tt.name, err, tt.want)
		}
		wctx, cancel := context.WithTimeout(tt.ctx, time.Millisecond)
		_, err := b.Wait(wctx, tt.in.ID)
		cancel()
		if tt.want == "" && !errors.Is(err, context.DeadlineExceeded) || tt.want != "" && code(err) != tt.want {
			t.Errorf("%s: Wait: got %v, want code %q (or the deadline)", tt.name, err, tt.want)
		}
	}

	lists := []struct {
		name string
		ctx  context.Context
		want []*hitl.Interaction
	}{
		{"Agent", buildBot, []*hitl.Interaction{open, toAlice}},
		{"OtherAgent", otherBot, []*hitl.Interaction{toOps}},
		{"Alice", alice, []*hitl.Interaction{open, toAlice}},
		{"Bob", bob, []*hitl.Interaction{open, toOps}},
		{"Admin", root, []*hitl.Interaction{open, toOps, toAlice}},
	}
	for _, tt := range lists {
		got, _, err := b.List(tt.ctx, hitl.ListFilter{})
		if err != nil {
			t.Fatalf("%s: List: %v", tt.name, err)
		}
		if g, w := ids(got), ids(tt.want); g != w {
			t.Errorf("%s: List: got %s, want %s", tt.name, g, w)
		}
	}
	if got, _, err := b.List(buildBot, hitl.ListFilter{CreatedBy: "other-bot"}); err != nil || len(got) != 0 {
		t.Errorf("agent lists another agent's: got %s, %v; want none", ids(got), err)
	}

	value := json.RawMessage(`"ok"`)
	for _, tt := range []struct {
		name string
		ctx  context.Context
		id   string
		want string
		msg  string
	}{
		{"AgentAnswersOwn", buildBot, open.ID, hitl.EFORBIDDEN, "agents cannot answer"},
		{"AgentAnswersUnknown", buildBot, "nope", hitl.EFORBIDDEN, "agents cannot answer"},
		{"NonTargetAnswers", bob, toAlice.ID, hitl.ENOTFOUND, fmt.Sprintf("interaction %q not found", toAlice.ID)},
		{"UnknownAnswered", bob, "nope", hitl.ENOTFOUND, `interaction "nope" not found`},
	} {
		_, err := b.Respond(tt.ctx, tt.id, value)
		if code(err) != tt.want || hitl.ErrorMessage(err) != tt.msg {
			t.Errorf("%s: Respond: got %v, want %s %q", tt.name, err, tt.want, tt.msg)
		}
	}
	// Claims are as answers: a person who cannot see the question learns
	// nothing of it.
	for _, tt := range []struct {
		name string
		ctx  context.Context
		id   string
		want string
	}{
		{"AgentClaims", buildBot, open.ID, hitl.EFORBIDDEN},
		{"NonTargetClaims", bob, toAlice.ID, hitl.ENOTFOUND},
		{"UnknownClaimed", bob, "nope", hitl.ENOTFOUND},
	} {
		if _, err := b.Claim(tt.ctx, tt.id, 0); code(err) != tt.want {
			t.Errorf("%s: Claim: got %v, want code %q", tt.name, err, tt.want)
		}
		if _, err := b.Release(tt.ctx, tt.id); code(err) != tt.want {
			t.Errorf("%s: Release: got %v, want code %q", tt.name, err, tt.want)
		}
	}
	if _, err := b.Respond(alice, toAlice.ID, value); err != nil {
		t.Errorf("target answers: %v", err)
	}

	for _, tt := range []struct {
		name string
		ctx  context.Context
		id   string
		want string
	}{
		{"ResponderCancels", bob, toOps.ID, hitl.EFORBIDDEN},
		{"OtherAgentCancels", buildBot, toOps.ID, hitl.ENOTFOUND},
		{"CreatorCancels", otherBot, toOps.ID, ""},
		{"AdminCancels", root, open.ID, ""},
	} {
		if _, err := b.Cancel(tt.ctx, tt.id, ""); code(err) != tt.want {
			t.Errorf("%s: Cancel: got %v, want code %q", tt.name, err, tt.want)
		}
	}
	if got, err := b.Get(root, toOps.ID); err != nil || got.Status != hitl.StatusCancelled || got.Result.RespondedBy != "other-bot" {
		t.Errorf("after the creator cancelled: got %+v, %v", got, err)
	}
}

// ids joins the IDs of list, for comparison.
func ids(list []*hitl.Interaction) string {
	s := ""
	for _, in := range list {
		s += in.ID + " "
	}
	return s
}
