package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hitl-sh/hitl"
)

// askQuorum is an approval that needs n approvals, asked at base, due in
// 60 s.
func askQuorum(t *testing.T, n int, claim hitl.ClaimMode) *hitl.Interaction {
	t.Helper()
	return ask(t, hitl.CreateRequest{Type: hitl.TypeApproval, Timeout: 60, ClaimMode: claim,
		Consensus: &hitl.Consensus{Mode: hitl.ModeQuorum, Required: n}}, "agent", base)
}

// vote is who's answer value (JSON) at when, through the web.
func vote(who, value string, when time.Time) *hitl.Transition {
	return &hitl.Transition{Status: hitl.StatusAnswered, Value: []byte(value), By: who, Via: hitl.ChannelWeb, At: when}
}

// castVote counts tr on id with electorate.
func castVote(t *testing.T, s hitl.Store, id string, tr *hitl.Transition, electorate ...string) (*hitl.Interaction, *hitl.Event, error) {
	t.Helper()
	return s.ChangePending(t.Context(), id, tr.At, hitl.Ballot{Answer: tr, Electorate: electorate, At: tr.At}.Change())
}

// chain returns the types of ev and the events after it.
func chain(ev *hitl.Event) []hitl.EventType {
	var out []hitl.EventType
	for ; ev != nil; ev = ev.Next {
		out = append(out, ev.Type)
	}
	return out
}

func testVoteRoundTrip(t *testing.T, s hitl.Store) {
	in := create(t, s, askQuorum(t, 2, ""))
	people := []string{"alice", "bob", "carol"}

	out, ev, err := castVote(t, s, in.ID, vote("alice", "true", at(1)), people...)
	if err != nil {
		t.Fatalf("first vote: %v", err)
	}
	if out.Status != hitl.StatusPending || len(out.Votes) != 1 || out.VotesNeeded != 2 {
		t.Fatalf("after one vote: status %s, votes %v, needed %d; want pending, alice's, 2", out.Status, out.Votes, out.VotesNeeded)
	}
	if got, want := chain(ev), []hitl.EventType{hitl.EventVoted}; !cmp.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if ev.Actor != "alice" || ev.Channel != hitl.ChannelWeb || ev.Detail != "true" || !ev.At.Equal(at(1)) || ev.Seq == 0 {
		t.Errorf("voted event %+v: want alice via web at %v, detail true", ev, at(1))
	}
	wantVote := hitl.Vote{By: "alice", Value: []byte("true"), Channel: hitl.ChannelWeb, At: at(1)}
	if diff := cmp.Diff([]hitl.Vote{wantVote}, get(t, s, in.ID).Votes); diff != "" {
		t.Errorf("stored votes (-want +got):\n%s", diff)
	}

	before := lastSeq(t, s)
	if _, _, err := castVote(t, s, in.ID, vote("alice", "false", at(2)), people...); !errors.Is(err, hitl.ErrAlreadyVoted) {
		t.Fatalf("second vote by alice: got %v, want ErrAlreadyVoted", err)
	}
	if got := lastSeq(t, s); got != before {
		t.Errorf("a refused vote appended events: last seq %d, want %d", got, before)
	}

	out, ev, err = castVote(t, s, in.ID, vote("bob", "true", at(3)), people...)
	if err != nil {
		t.Fatalf("deciding vote: %v", err)
	}
	if got, want := chain(ev), []hitl.EventType{hitl.EventVoted, hitl.EventAnswered}; !cmp.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if ev.Next.Seq <= ev.Seq || ev.Next.Interaction.Status != hitl.StatusAnswered {
		t.Errorf("answered event %+v after voted %d", ev.Next, ev.Seq)
	}
	stored := get(t, s, in.ID)
	for _, got := range []*hitl.Interaction{out, stored} {
		if got.Status != hitl.StatusAnswered || string(got.Result.Value) != "true" || got.Result.RespondedBy != "bob" || len(got.Result.Votes) != 2 {
			t.Errorf("decided: status %s, result %+v; want answered true by bob with 2 votes", got.Status, got.Result)
		}
	}
	if _, _, err := castVote(t, s, in.ID, vote("carol", "false", at(4)), people...); !errors.Is(err, hitl.ErrNotPending) {
		t.Errorf("vote after the outcome: got %v, want ErrNotPending", err)
	}
}

func testVoteUnreachable(t *testing.T, s hitl.Store) {
	in := create(t, s, askQuorum(t, 2, ""))
	// Three may vote: one reject leaves the quorum of two within reach,
	// the second does not.
	people := []string{"alice", "bob", "carol"}
	if out, _, err := castVote(t, s, in.ID, vote("alice", "false", at(1)), people...); err != nil || out.Status != hitl.StatusPending {
		t.Fatalf("first reject: %v, %v", out, err)
	}
	out, ev, err := castVote(t, s, in.ID, vote("bob", "false", at(2)), people...)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != hitl.StatusAnswered || string(out.Result.Value) != "false" || out.Result.Reason == "" {
		t.Errorf("got %s %+v; want answered false with a reason", out.Status, out.Result)
	}
	if ev.Next == nil || ev.Next.Detail != out.Result.Reason {
		t.Errorf("answered event %+v; want the reason as its detail", ev.Next)
	}
}

func testVotePastDeadline(t *testing.T, s hitl.Store) {
	in := create(t, s, askQuorum(t, 2, ""))
	if _, _, err := castVote(t, s, in.ID, vote("alice", "true", at(61))); !errors.Is(err, hitl.ErrPastDeadline) {
		t.Errorf("vote after the deadline: got %v, want ErrPastDeadline", err)
	}
	if _, _, err := castVote(t, s, "nope", vote("alice", "true", at(1))); hitl.ErrorCode(err) != hitl.ENOTFOUND {
		t.Errorf("vote on nothing: got %v, want ENOTFOUND", err)
	}
}

// testVoteConcurrent casts 30 votes at once on a quorum of 5: exactly five
// count and decide it, once; the others find it decided.
func testVoteConcurrent(t *testing.T, s hitl.Store) {
	in := create(t, s, askQuorum(t, 5, ""))
	const n = 30
	var people []string
	for i := range n {
		people = append(people, fmt.Sprintf("p%02d", i))
	}
	var (
		wg                 sync.WaitGroup
		mu                 sync.Mutex
		decided, notPend   int
		counted, answeredN int
	)
	for _, p := range people {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ev, err := castVote(t, s, in.ID, vote(p, "true", at(1)), people...)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, hitl.ErrNotPending):
				notPend++
			case err != nil:
				t.Errorf("vote by %s: %v", p, err)
			default:
				counted++
				if ev.Next != nil {
					decided++
				}
			}
		}()
	}
	wg.Wait()
	if decided != 1 || counted != 5 || notPend != n-5 {
		t.Errorf("decided %d, counted %d, refused %d; want 1, 5, %d", decided, counted, notPend, n-5)
	}
	for _, ev := range events(t, s) {
		if ev.InteractionID == in.ID && ev.Type == hitl.EventAnswered {
			answeredN++
		}
	}
	if got := get(t, s, in.ID); answeredN != 1 || len(got.Result.Votes) != 5 {
		t.Errorf("%d answered events, %d votes in the result; want 1 and 5", answeredN, len(got.Result.Votes))
	}
}

func testClaimRoundTrip(t *testing.T, s hitl.Store) {
	in := create(t, s, askQuorum(t, 1, hitl.ClaimExclusive))
	claim := func(who string, ttl time.Duration, when time.Time) (*hitl.Interaction, *hitl.Event, error) {
		ch := hitl.ClaimChange{By: who, Channel: hitl.ChannelWeb, TTL: ttl}
		return s.ChangePending(t.Context(), in.ID, when, func(in *hitl.Interaction) (*hitl.Change, error) {
			ev, err := in.ApplyClaim(ch, when)
			return &hitl.Change{Event: ev}, err
		})
	}
	out, ev, err := claim("alice", 10*time.Minute, at(1))
	if err != nil {
		t.Fatal(err)
	}
	want := &hitl.Claim{By: "alice", Channel: hitl.ChannelWeb, At: at(1), ExpiresAt: at(601)}
	if diff := cmp.Diff(want, out.Claim); diff != "" {
		t.Errorf("claim (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, get(t, s, in.ID).Claim); diff != "" {
		t.Errorf("stored claim (-want +got):\n%s", diff)
	}
	if ev.Type != hitl.EventClaimed || ev.Actor != "alice" || ev.Seq == 0 {
		t.Errorf("claim event %+v", ev)
	}
	if _, _, err := claim("bob", time.Minute, at(2)); hitl.ErrorCode(err) != hitl.ECONFLICT {
		t.Errorf("bob claims alice's claim: got %v, want ECONFLICT", err)
	}
	if _, _, err := castVote(t, s, in.ID, vote("bob", "true", at(3))); hitl.ErrorCode(err) != hitl.ECONFLICT {
		t.Errorf("bob answers while alice holds an exclusive claim: got %v, want ECONFLICT", err)
	}
	if _, _, err := claim("bob", 0, at(4)); hitl.ErrorCode(err) != hitl.ECONFLICT {
		t.Errorf("bob releases alice's claim: got %v, want ECONFLICT", err)
	}
	out, ev, err = claim("alice", 0, at(5))
	if err != nil || out.Claim != nil || ev.Type != hitl.EventReleased {
		t.Fatalf("alice releases: claim %v, event %v, err %v", out.Claim, ev, err)
	}
	if _, _, err := claim("bob", 30*time.Second, at(6)); err != nil {
		t.Fatalf("bob claims after the release: %v", err)
	}
	// Expired, bob's claim stops nobody.
	out, ev, err = castVote(t, s, in.ID, vote("carol", "true", at(40)))
	if err != nil || out.Status != hitl.StatusAnswered || len(chain(ev)) != 2 {
		t.Errorf("carol answers after bob's claim expired: status %v, events %v, err %v", out.Status, chain(ev), err)
	}
}

// testListWorkflow checks that ListInteractions with Workflow lists only
// the interactions that carry one (a voting consensus, a claim mode).
func testListWorkflow(t *testing.T, s hitl.Store) {
	plain := create(t, s, ask(t, hitl.CreateRequest{Question: "Plain?", Timeout: 60}, "agent", base))
	quorum := create(t, s, askQuorum(t, 2, ""))
	claimable := create(t, s, ask(t, hitl.CreateRequest{Question: "Claim me?", Timeout: 60, ClaimMode: hitl.ClaimShared}, "agent", at(1)))
	ended := create(t, s, askQuorum(t, 1, ""))
	resolve(t, s, ended.ID, answer(`true`, at(2)))

	ids := func(f hitl.ListFilter) []string {
		got, _ := list(t, s, f)
		var out []string
		for _, in := range got {
			out = append(out, in.ID)
		}
		return out
	}
	if got, want := ids(hitl.ListFilter{Status: hitl.StatusPending, Workflow: true}), []string{claimable.ID, quorum.ID}; !sameSet(got, want) {
		t.Errorf("pending with a workflow: %v, want %v (not the plain %s)", got, want, plain.ID)
	}
	if got, want := ids(hitl.ListFilter{Workflow: true}), []string{claimable.ID, quorum.ID, ended.ID}; !sameSet(got, want) {
		t.Errorf("any status with a workflow: %v, want %v", got, want)
	}
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	return cmp.Equal(a, b, cmpopts.SortSlices(func(x, y string) bool { return x < y }))
}
