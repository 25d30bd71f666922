package broker_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/sqlite"
)

// team starts a broker whose store has the users alice, bob and carol (in
// group ops) and dave (in no group).
func team(t *testing.T) *broker.Broker {
	t.Helper()
	b, ids := withIdentities(t, nil)
	for _, u := range []*hitl.User{
		{Name: "alice", Groups: []string{"ops"}}, {Name: "bob", Groups: []string{"ops"}},
		{Name: "carol", Groups: []string{"ops"}}, {Name: "dave"},
	} {
		if err := ids.CreateUser(context.Background(), u); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// withIdentities starts a broker over a new SQLite file and returns it
// with the store's users and tokens.
func withIdentities(t *testing.T, opts *broker.Options) (*broker.Broker, hitl.Identities) {
	t.Helper()
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "hitl.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return startBroker(t, store, opts), store
}

// voter is ctx for the person name answering on the web.
func voter(name string) context.Context {
	return hitl.WithCaller(context.Background(), hitl.Caller{Name: name, Channel: hitl.ChannelWeb, Role: hitl.RoleResponder, Groups: groupsOf[name]})
}

var groupsOf = map[string][]string{"alice": {"ops"}, "bob": {"ops"}, "carol": {"ops"}}

// agent is ctx for the agent deploy-bot.
var agent = hitl.WithCaller(context.Background(), hitl.Caller{Name: "deploy-bot", Channel: hitl.ChannelAPI, Role: hitl.RoleAgent})

func ask(t *testing.T, b *broker.Broker, req hitl.CreateRequest) *hitl.Interaction {
	t.Helper()
	if req.Question == "" {
		req.Question = "Deploy?"
	}
	if req.Timeout == 0 {
		req.Timeout = 600
	}
	in, _, err := b.Create(agent, req)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return in
}

func vote(t *testing.T, b *broker.Broker, id, who, value string) *hitl.Interaction {
	t.Helper()
	out, err := b.Respond(voter(who), id, json.RawMessage(value))
	if err != nil {
		t.Fatalf("%s votes %s: %v", who, value, err)
	}
	return out
}

func refused(t *testing.T, b *broker.Broker, id, who, value, code string) error {
	t.Helper()
	_, err := b.Respond(voter(who), id, json.RawMessage(value))
	if hitl.ErrorCode(err) != code {
		t.Fatalf("%s votes %s: got %v, want %s", who, value, err, code)
	}
	return err
}

func opsTargets() *hitl.Targets { return &hitl.Targets{Groups: []string{"ops"}} }

func TestConsensusAll(t *testing.T) {
	b := team(t)
	in := ask(t, b, hitl.CreateRequest{Type: hitl.TypeApproval, Targets: opsTargets(), Consensus: &hitl.Consensus{Mode: hitl.ModeAll}})
	if in.VotesNeeded != 3 {
		t.Fatalf("votes needed %d, want 3 (the ops group)", in.VotesNeeded)
	}
	out := vote(t, b, in.ID, "alice", `"approve"`)
	if out.Status != hitl.StatusPending || len(out.Votes) != 1 {
		t.Fatalf("after alice: %s with %d votes", out.Status, len(out.Votes))
	}
	err := refused(t, b, in.ID, "alice", `"approve"`, hitl.ECONFLICT)
	if !strings.Contains(hitl.ErrorMessage(err), "already answered: approved") {
		t.Errorf("second vote: %q; want it to say what alice answered", hitl.ErrorMessage(err))
	}
	refused(t, b, in.ID, "dave", `"approve"`, hitl.ENOTFOUND) // not in ops: he cannot see it
	vote(t, b, in.ID, "bob", `true`)
	out = vote(t, b, in.ID, "carol", `"yes"`)
	if out.Status != hitl.StatusAnswered || string(out.Result.Value) != "true" || len(out.Result.Votes) != 3 {
		t.Fatalf("after all three: %s %+v", out.Status, out.Result)
	}
	got, _ := b.Wait(context.Background(), in.ID)
	if got.Status != hitl.StatusAnswered || len(got.Result.Votes) != 3 {
		t.Errorf("wait: %s with %v", got.Status, got.Result)
	}
	refused(t, b, in.ID, "carol", `"approve"`, hitl.ECONFLICT)
}

func TestConsensusVeto(t *testing.T) {
	b := team(t)
	in := ask(t, b, hitl.CreateRequest{Type: hitl.TypeApproval, Targets: opsTargets(),
		Consensus: &hitl.Consensus{Mode: hitl.ModeQuorum, Required: 2, Veto: true}})
	vote(t, b, in.ID, "alice", `true`)
	out := vote(t, b, in.ID, "bob", `false`)
	if out.Status != hitl.StatusAnswered || string(out.Result.Value) != "false" || out.Result.Reason != "vetoed by bob" {
		t.Fatalf("after bob's veto: %s %+v", out.Status, out.Result)
	}
}

func TestConsensusExcludesRequester(t *testing.T) {
	b := team(t)
	// Asked on alice's behalf: she may not approve her own request, in
	// first mode too.
	in := ask(t, b, hitl.CreateRequest{Type: hitl.TypeApproval, Targets: opsTargets(), OnBehalfOf: "alice"})
	err := refused(t, b, in.ID, "alice", `true`, hitl.EFORBIDDEN)
	if !strings.Contains(hitl.ErrorMessage(err), "alice asked this question") {
		t.Errorf("refusal %q", hitl.ErrorMessage(err))
	}
	if out := vote(t, b, in.ID, "bob", `true`); out.Status != hitl.StatusAnswered {
		t.Errorf("bob's answer: %s", out.Status)
	}
	// The majority of ops less alice is two.
	in = ask(t, b, hitl.CreateRequest{Type: hitl.TypeApproval, Targets: opsTargets(), OnBehalfOf: "alice",
		Consensus: &hitl.Consensus{Mode: hitl.ModeMajority}})
	if in.VotesNeeded != 2 {
		t.Errorf("votes needed %d, want 2", in.VotesNeeded)
	}
	// Told not to exclude her, she may.
	no := false
	in = ask(t, b, hitl.CreateRequest{Type: hitl.TypeApproval, OnBehalfOf: "alice", Consensus: &hitl.Consensus{Mode: hitl.ModeFirst, ExcludeRequester: &no}})
	vote(t, b, in.ID, "alice", `true`)
}

func TestConsensusUnreachableQuorum(t *testing.T) {
	b := team(t)
	// Three may vote, four are needed: rejected at once, saying why.
	in := ask(t, b, hitl.CreateRequest{Type: hitl.TypeApproval, Targets: opsTargets(), Consensus: &hitl.Consensus{Mode: hitl.ModeQuorum, Required: 4}})
	if in.Status != hitl.StatusAnswered || string(in.Result.Value) != "false" || !strings.Contains(in.Result.Reason, "only 3 people may answer") {
		t.Fatalf("quorum of 4 among 3: %s %+v", in.Status, in.Result)
	}
	// Two rejects among three leave a quorum of two out of reach.
	in = ask(t, b, hitl.CreateRequest{Type: hitl.TypeApproval, Targets: opsTargets(), Consensus: &hitl.Consensus{Mode: hitl.ModeQuorum, Required: 2}})
	vote(t, b, in.ID, "alice", `false`)
	out := vote(t, b, in.ID, "bob", `false`)
	if out.Status != hitl.StatusAnswered || string(out.Result.Value) != "false" || !strings.Contains(out.Result.Reason, "cannot be reached") {
		t.Fatalf("two rejects: %s %+v", out.Status, out.Result)
	}
	// A choice that cannot be decided is cancelled, saying why.
	in = ask(t, b, hitl.CreateRequest{Type: hitl.TypeSingleChoice, Options: hitl.OptionList{{Key: "eu"}, {Key: "us"}}, Targets: opsTargets(),
		Consensus: &hitl.Consensus{Mode: hitl.ModeAll}})
	vote(t, b, in.ID, "alice", `"eu"`)
	out = vote(t, b, in.ID, "bob", `"us"`)
	if out.Status != hitl.StatusCancelled || !strings.Contains(out.Result.Reason, "everyone had to agree") {
		t.Fatalf("a split 'all': %s %+v", out.Status, out.Result)
	}
}

func TestConsensusMajorityChoice(t *testing.T) {
	b := team(t)
	in := ask(t, b, hitl.CreateRequest{Type: hitl.TypeMultiChoice, Options: hitl.OptionList{{Key: "a"}, {Key: "b"}, {Key: "c"}}, Targets: opsTargets(),
		Consensus: &hitl.Consensus{Mode: hitl.ModeMajority}})
	vote(t, b, in.ID, "alice", `["a","b"]`)
	vote(t, b, in.ID, "bob", `["c"]`)
	out := vote(t, b, in.ID, "carol", `["b","a"]`)
	if out.Status != hitl.StatusAnswered || string(out.Result.Value) != `["a","b"]` {
		t.Fatalf("two of three chose a and b: %s %+v", out.Status, out.Result)
	}
}

func TestConsensusAllFreeText(t *testing.T) {
	b := team(t)
	in := ask(t, b, hitl.CreateRequest{Targets: &hitl.Targets{Users: []string{"alice", "bob"}}, Consensus: &hitl.Consensus{Mode: hitl.ModeAll}})
	vote(t, b, in.ID, "bob", `"ship it"`)
	out := vote(t, b, in.ID, "alice", `"wait for QA"`)
	if out.Status != hitl.StatusAnswered || string(out.Result.Value) != `["ship it","wait for QA"]` {
		t.Fatalf("every answer: %s %+v", out.Status, out.Result)
	}
	for _, mode := range []hitl.Mode{hitl.ModeMajority, hitl.ModeQuorum} {
		_, _, err := b.Create(agent, hitl.CreateRequest{Question: "Why?", Consensus: &hitl.Consensus{Mode: mode, Required: 1}})
		if hitl.ErrorCode(err) != hitl.EINVALID {
			t.Errorf("%s on free text: got %v, want 400", mode, err)
		}
	}
}

// TestConsensusTargetRemoved: bob leaves while an all-of-two approval
// waits for him; the recount decides it with alice's approval alone.
func TestConsensusTargetRemoved(t *testing.T) {
	b, ids := withIdentities(t, nil)
	for _, name := range []string{"alice", "bob"} {
		if err := ids.CreateUser(context.Background(), &hitl.User{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	in := ask(t, b, hitl.CreateRequest{Type: hitl.TypeApproval, Targets: &hitl.Targets{Users: []string{"alice", "bob"}}, Consensus: &hitl.Consensus{Mode: hitl.ModeAll}})
	vote(t, b, in.ID, "alice", `true`)
	if out, err := b.Recount(context.Background(), in.ID); err != nil || out.Status != hitl.StatusPending {
		t.Fatalf("recount with nothing changed: %v, %v", out, err)
	}
	if err := ids.DeleteUser(context.Background(), "bob"); err != nil {
		t.Fatal(err)
	}
	out, err := b.Recount(context.Background(), in.ID)
	if err != nil || out.Status != hitl.StatusAnswered || string(out.Result.Value) != "true" {
		t.Fatalf("recount after bob left: %+v, %v", out, err)
	}
}

// TestConsensusRecountedOnItsOwn: the broker counts again by itself, on
// a synthetic clock: once bob is gone, alice's approval decides the
// question at the next recount.
func TestConsensusRecountedOnItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, ids := withIdentities(t, &broker.Options{RecountInterval: time.Minute})
		for _, name := range []string{"alice", "bob"} {
			if err := ids.CreateUser(context.Background(), &hitl.User{Name: name}); err != nil {
				t.Fatal(err)
			}
		}
		in := ask(t, b, hitl.CreateRequest{Type: hitl.TypeApproval, Consensus: &hitl.Consensus{Mode: hitl.ModeAll}})
		vote(t, b, in.ID, "alice", `true`)
		if err := ids.DeleteUser(context.Background(), "bob"); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := b.Wait(ctx, in.ID)
		if err != nil || out.Status != hitl.StatusAnswered {
			t.Fatalf("after a recount: %+v, %v", out, err)
		}
	})
}

func TestClaimExclusive(t *testing.T) {
	b := team(t)
	in := ask(t, b, hitl.CreateRequest{Type: hitl.TypeApproval, Targets: opsTargets(), ClaimMode: hitl.ClaimExclusive})
	out, err := b.Claim(voter("alice"), in.ID, 5*time.Minute)
	if err != nil || out.Claim == nil || out.Claim.By != "alice" {
		t.Fatalf("claim: %+v, %v", out, err)
	}
	if _, err := b.Claim(voter("bob"), in.ID, 0); hitl.ErrorCode(err) != hitl.ECONFLICT {
		t.Errorf("bob claims too: %v", err)
	}
	err = refused(t, b, in.ID, "bob", `true`, hitl.ECONFLICT)
	if !strings.Contains(hitl.ErrorMessage(err), "alice is on it") {
		t.Errorf("bob's answer refused with %q", hitl.ErrorMessage(err))
	}
	if _, err := b.Release(voter("alice"), in.ID); err != nil {
		t.Fatal(err)
	}
	if out := vote(t, b, in.ID, "bob", `true`); out.Status != hitl.StatusAnswered {
		t.Errorf("bob after the release: %s", out.Status)
	}
	if _, err := b.Claim(voter("dave"), in.ID, 0); hitl.ErrorCode(err) != hitl.ENOTFOUND {
		t.Errorf("dave (not targeted) claims: %v", err)
	}
}
