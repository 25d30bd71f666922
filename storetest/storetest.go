// Package storetest is the conformance suite every hitl.Store must pass.
// A behaviour is added here first, then made to pass on each store:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) hitl.Store {
//			s, err := sqlite.Open(filepath.Join(t.TempDir(), "hitl.db"), nil)
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// Every test runs in parallel with its own empty store, and controls time
// by passing explicit times (creation, transition and "now"), so a store's
// own clock only fills times the caller leaves zero.
package storetest

import (
	"encoding/json"
	"errors"
	"github.com/google/go-cmp/cmp"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

// Run runs the conformance suite. newStore must return a new, empty store
// for each call and close it when the test ends (t.Cleanup).
func Run(t *testing.T, newStore func(t *testing.T) hitl.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s hitl.Store)
	}{
		{"CreateRoundTrip", testCreateRoundTrip},
		{"CreateRoundTripEveryType", testCreateRoundTripEveryType},
		{"CreateMintsID", testCreateMintsID},
		{"CreateTimePrecision", testCreateTimePrecision},
		{"CreateDuplicateID", testCreateDuplicateID},
		{"CreateAppendsEvent", testCreateAppendsEvent},
		{"Idempotency", testIdempotency},
		{"IdempotencyConcurrent", testIdempotencyConcurrent},
		{"InteractionNotFound", testInteractionNotFound},
		{"ListNewestFirst", testListNewestFirst},
		{"ListFilters", testListFilters},
		{"ListPaging", testListPaging},
		{"ListPagingStableUnderInserts", testListPagingStableUnderInserts},
		{"ListLimits", testListLimits},
		{"ListBadCursor", testListBadCursor},
		{"ListVisibleTo", testListVisibleTo},
		{"ListTriageFilters", testListTriageFilters},
		{"ListByDeadline", testListByDeadline},
		{"ListProject", testListProject},
		{"CountMatching", testCountMatching},
		{"Count", testCount},
		{"CountPending", testCountPending},
		{"CountPendingTargeted", testCountPendingTargeted},
		{"CountDue", testCountDue},
		{"Resolve", testResolve},
		{"ResolveTwice", testResolveTwice},
		{"ResolveNotFound", testResolveNotFound},
		{"ResolveNotTerminal", testResolveNotTerminal},
		{"ResolveConcurrent", testResolveConcurrent},
		{"ResolvePastDeadline", testResolvePastDeadline},
		{"NextDeadline", testNextDeadline},
		{"DueInteractions", testDueInteractions},
		{"AppendEvent", testAppendEvent},
		{"AppendEventDefaults", testAppendEventDefaults},
		{"AppendEventNotFound", testAppendEventNotFound},
		{"Events", testEvents},
		{"EventsInteractionIsCurrent", testEventsInteractionIsCurrent},
		{"InteractionEvents", testInteractionEvents},
		{"ListSession", testListSession},
		{"LastEventSeq", testLastEventSeq},
		{"PurgeEnded", testPurgeEnded},
		{"PurgeKeepsNewestEvent", testPurgeKeepsNewestEvent},
		{"PurgeBatches", testPurgeBatches},
		{"PurgeConcurrent", testPurgeConcurrent},
		{"PurgeResume", testPurgeResume},
		{"TextNUL", testTextNUL},
		{"Ping", testPing},
		{"CreateRoundTripAction", testCreateRoundTripAction},
		{"CreateAnswered", testCreateAnswered},
		{"ResolveAction", testResolveAction},
		{"ResolveWithRule", testResolveWithRule},
		{"RuleRoundTrip", testRuleRoundTrip},
		{"RuleDefaults", testRuleDefaults},
		{"RuleNotFound", testRuleNotFound},
		{"RuleRevoke", testRuleRevoke},
		{"ActiveRules", testActiveRules},
		{"RulesVersion", testRulesVersion},
		{"CreateAtRulesVersion", testCreateAtRulesVersion},
		{"RulesList", testRulesList},
		{"PurgeWithRuleEvents", testPurgeWithRuleEvents},
		{"VoteRoundTrip", testVoteRoundTrip},
		{"ListWorkflow", testListWorkflow},
		{"VoteUnreachable", testVoteUnreachable},
		{"VotePastDeadline", testVotePastDeadline},
		{"VoteConcurrent", testVoteConcurrent},
		{"ClaimRoundTrip", testClaimRoundTrip},
		{"ListenCatchesUp", testListenCatchesUp},
		{"ListenReportsCommits", testListenReportsCommits},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newStore(t))
		})
	}
}

// base is the suite's fixed "now": in the future, with milliseconds.
var base = time.Date(2030, 1, 2, 3, 4, 5, 678_000_000, time.UTC)

// at returns base plus n seconds.
func at(n int) time.Time { return base.Add(time.Duration(n) * time.Second) }

// ask returns the pending interaction the engine would build for req from
// agent at now (ID unset).
func ask(t *testing.T, req hitl.CreateRequest, agent string, now time.Time) *hitl.Interaction {
	t.Helper()
	if req.Question == "" {
		req.Question = "Deploy to production?"
	}
	in, err := hitl.NewInteraction(req, hitl.Caller{Name: agent, Channel: hitl.ChannelAPI}, now)
	if err != nil {
		t.Fatalf("NewInteraction: %v", err)
	}
	return in
}

// askAt is ask for a free-text question from "agent" created at now and
// due timeout seconds later.
func askAt(t *testing.T, now time.Time, timeout float64) *hitl.Interaction {
	t.Helper()
	return ask(t, hitl.CreateRequest{Timeout: timeout}, "agent", now)
}

// create stores in, which must be new, and returns the stored interaction.
func create(t *testing.T, s hitl.Store, in *hitl.Interaction) *hitl.Interaction {
	t.Helper()
	got, ev, existed, err := s.CreateInteraction(t.Context(), in)
	if err != nil {
		t.Fatalf("CreateInteraction: %v", err)
	}
	if existed || ev == nil {
		t.Fatalf("CreateInteraction: got existed %v, event %v; want a new interaction and its event", existed, ev)
	}
	return got
}

// get returns the stored interaction with id.
func get(t *testing.T, s hitl.Store, id string) *hitl.Interaction {
	t.Helper()
	in, err := s.Interaction(t.Context(), id)
	if err != nil {
		t.Fatalf("Interaction(%s): %v", id, err)
	}
	return in
}

// resolve applies tr to id, which must succeed.
func resolve(t *testing.T, s hitl.Store, id string, tr hitl.Transition) (*hitl.Interaction, *hitl.Event) {
	t.Helper()
	in, ev, err := s.Resolve(t.Context(), id, tr)
	if err != nil {
		t.Fatalf("Resolve(%s, %s): %v", id, tr.Status, err)
	}
	return in, ev
}

// returnedAndStored checks that op returned want and that the store now
// holds want.
func returnedAndStored(t *testing.T, s hitl.Store, op string, want, got *hitl.Interaction) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s returned (-want +got):\n%s", op, d)
	}
	if d := cmp.Diff(want, get(t, s, want.ID)); d != "" {
		t.Errorf("interaction after %s (-want +got):\n%s", op, d)
	}
}

// unchanged checks that the store still holds current and has appended no
// event after seq.
func unchanged(t *testing.T, s hitl.Store, current *hitl.Interaction, seq int64) {
	t.Helper()
	if d := cmp.Diff(current, get(t, s, current.ID)); d != "" {
		t.Errorf("interaction changed (-want +got):\n%s", d)
	}
	if got := lastSeq(t, s); got != seq {
		t.Errorf("LastEventSeq: got %d, want %d (nothing appended)", got, seq)
	}
}

// refused applies tr to current, which must fail with target, return
// current and change nothing.
func refused(t *testing.T, s hitl.Store, current *hitl.Interaction, tr hitl.Transition, target error) {
	t.Helper()
	seq := lastSeq(t, s)
	got, ev, err := s.Resolve(t.Context(), current.ID, tr)
	wantErr(t, "Resolve", err, target)
	if ev != nil {
		t.Errorf("Resolve: got event %+v, want none", ev)
	}
	if d := cmp.Diff(current, got); d != "" {
		t.Errorf("Resolve returned (-want current +got):\n%s", d)
	}
	unchanged(t, s, current, seq)
}

// answer is a person's answer at time when.
func answer(value string, when time.Time) hitl.Transition {
	return hitl.Transition{Status: hitl.StatusAnswered, Value: []byte(value), By: "alice", Via: hitl.ChannelWeb, At: when}
}

// keyed is tr sent with the answer idempotency key key.
func keyed(tr hitl.Transition, key string) hitl.Transition {
	tr.IdempotencyKey = key
	return tr
}

// cancel is the agent withdrawing its question at time when.
func cancel(when time.Time) hitl.Transition {
	return hitl.Transition{Status: hitl.StatusCancelled, By: "agent", Via: hitl.ChannelAPI, At: when, Reason: "agent_cancelled"}
}

// expire is the deadline passing (on_timeout cancel) at time when.
func expire(when time.Time) hitl.Transition {
	return hitl.Transition{Status: hitl.StatusExpired, Via: hitl.ChannelTimeout, At: when, Reason: "timeout"}
}

// events returns every event in the store.
func events(t *testing.T, s hitl.Store) []*hitl.Event {
	t.Helper()
	evs, err := s.Events(t.Context(), 0, hitl.MaxListLimit)
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	return evs
}

// lastSeq returns the store's LastEventSeq.
func lastSeq(t *testing.T, s hitl.Store) int64 {
	t.Helper()
	seq, err := s.LastEventSeq(t.Context())
	if err != nil {
		t.Fatalf("LastEventSeq: %v", err)
	}
	return seq
}

// ids returns the IDs of list.
func ids(list []*hitl.Interaction) []string {
	out := make([]string, len(list))
	for i, in := range list {
		out[i] = in.ID
	}
	return out
}

// wantCode fails t unless err is an application error with code.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := hitl.ErrorCode(err); got != code {
		t.Fatalf("%s: got error %v (code %q), want code %q", what, err, got, code)
	}
}

// wantErr fails t unless errors.Is(err, target).
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

// raw is a shorthand for a JSON literal.
func raw(s string) json.RawMessage { return json.RawMessage(s) }
