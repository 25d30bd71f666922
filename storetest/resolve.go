package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// deadline is when askAt(t, base, 60) is due.
var deadline = at(60)

// timedOut is the default response applied at the deadline at time when.
func timedOut(value string, when time.Time) hitl.Transition {
	return hitl.Transition{Status: hitl.StatusAnswered, Value: []byte(value), Via: hitl.ChannelTimeout, At: when, TimedOut: true}
}

// resolved returns in as it should read after tr.
func resolved(in *hitl.Interaction, tr hitl.Transition) *hitl.Interaction {
	out := *in
	out.Status = tr.Status
	out.Result = tr.Result()
	return &out
}

func testResolve(t *testing.T, s hitl.Store) {
	tests := []struct {
		name string
		tr   hitl.Transition
	}{
		{"Answered", answer(`"yes"`, at(10))},
		{"AnsweredObject", answer(`{"name":"x","n":[1,2]}`, at(10))},
		{"AnsweredWithKey", keyed(answer(`"yes"`, at(10)), "retry-7f3a")},
		{"AnsweredTimedOut", timedOut(`"default"`, deadline)},
		{"Expired", expire(deadline)},
		{"Cancelled", cancel(at(10))},
	}
	// Each again with the pending interaction as From, which a store may
	// build its result from.
	for _, tt := range tests {
		for _, from := range []bool{false, true} {
			name := tt.name
			if from {
				name += "From"
			}
			t.Run(name, func(t *testing.T) { resolveOnce(t, s, tt.tr, from) })
		}
	}
}

// resolveOnce resolves a new interaction with tr (from: passing it as
// tr.From) and checks the result, the stored row and the event.
func resolveOnce(t *testing.T, s hitl.Store, tr hitl.Transition, from bool) {
	in := create(t, s, askAt(t, base, 60))
	if from {
		tr.From = in
	}
	out, ev, err := s.Resolve(t.Context(), in.ID, tr)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	want := resolved(in, tr)
	returnedAndStored(t, s, "Resolve", want, out)
	if ev == nil {
		t.Fatal("Resolve: got no event")
	}
	wantEv := &hitl.Event{
		Seq:           ev.Seq,
		Type:          tr.EventType(),
		InteractionID: in.ID,
		At:            tr.At,
		Actor:         tr.By,
		Channel:       tr.Via,
		Detail:        tr.Reason,
		Interaction:   want,
	}
	if d := cmp.Diff(wantEv, ev); d != "" {
		t.Errorf("event (-want +got):\n%s", d)
	}
	evs, err := s.Events(t.Context(), ev.Seq-1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]*hitl.Event{wantEv}, evs); d != "" {
		t.Errorf("event log (-want +got):\n%s", d)
	}
}

func testResolveTwice(t *testing.T, s hitl.Store) {
	firsts := map[string]hitl.Transition{
		"Answered":  answer(`"first"`, at(10)),
		"TimedOut":  timedOut(`"default"`, deadline),
		"Expired":   expire(deadline),
		"Cancelled": cancel(at(10)),
	}
	seconds := map[string]hitl.Transition{
		"Answer":        answer(`"second"`, at(11)),
		"TimedOut":      timedOut(`"default"`, deadline),
		"Expire":        expire(deadline.Add(time.Second)),
		"Cancel":        cancel(at(11)),
		"AnswerPastDue": answer(`"late"`, deadline.Add(time.Hour)),
	}
	for fn, first := range firsts {
		for sn, second := range seconds {
			// With From too: a pending state read before the first.
			for _, from := range []bool{false, true} {
				name := fn + "Then" + sn
				if from {
					name += "From"
				}
				t.Run(name, func(t *testing.T) { resolveTwice(t, s, first, second, from) })
			}
		}
	}
}

// resolveTwice resolves a new interaction with first, then second (from:
// with the pending interaction as second.From), and checks that the second
// changed nothing.
func resolveTwice(t *testing.T, s hitl.Store, first, second hitl.Transition, from bool) {
	in := create(t, s, askAt(t, base, 60))
	done, _ := resolve(t, s, in.ID, first)
	if from {
		second.From = in
	}
	refused(t, s, done, second, hitl.ErrNotPending)
}

func testResolveNotFound(t *testing.T, s hitl.Store) {
	create(t, s, askAt(t, base, 60))
	_, _, err := s.Resolve(t.Context(), "no-such-id", answer(`"x"`, at(1)))
	wantCode(t, "Resolve(unknown)", err, hitl.ENOTFOUND)
}

func testResolveNotTerminal(t *testing.T, s hitl.Store) {
	in := create(t, s, askAt(t, base, 60))
	seq := lastSeq(t, s)
	for _, status := range []hitl.Status{hitl.StatusPending, "", "done"} {
		tr := answer(`"x"`, at(1))
		tr.Status = status
		if _, _, err := s.Resolve(t.Context(), in.ID, tr); err == nil {
			t.Errorf("Resolve to %q: got no error", status)
		}
	}
	unchanged(t, s, in, seq)
}

// testResolveConcurrent races 50 transitions; exactly one must win and
// every loser must see the winner's result.
func testResolveConcurrent(t *testing.T, s hitl.Store) {
	const n = 50
	in := create(t, s, askAt(t, base, 60))
	type result struct {
		in  *hitl.Interaction
		ev  *hitl.Event
		err error
	}
	results := make([]result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		tr := answer(fmt.Sprintf(`"answer %d"`, i), at(10))
		tr.By = fmt.Sprintf("person-%d", i)
		switch i % 5 {
		case 3:
			tr = cancel(at(10))
		case 4:
			tr = expire(deadline)
		}
		wg.Go(func() {
			<-start
			out, ev, err := s.Resolve(t.Context(), in.ID, tr)
			results[i] = result{out, ev, err}
		})
	}
	close(start)
	wg.Wait()

	final := get(t, s, in.ID)
	if final.Status == hitl.StatusPending || final.Result == nil {
		t.Fatalf("final state: got status %s, result %+v; want terminal", final.Status, final.Result)
	}
	wins := 0
	for i, r := range results {
		switch {
		case r.err == nil:
			wins++
			if r.ev == nil {
				t.Errorf("winner %d: got no event", i)
			}
		case r.err != nil && r.ev != nil:
			t.Errorf("loser %d: got event %+v with error %v", i, r.ev, r.err)
		default:
			wantErr(t, fmt.Sprintf("loser %d", i), r.err, hitl.ErrNotPending)
		}
		if d := cmp.Diff(final, r.in); d != "" {
			t.Errorf("Resolve %d returned (-want final +got):\n%s", i, d)
		}
	}
	if wins != 1 {
		t.Errorf("got %d successful Resolves, want exactly 1", wins)
	}
	if evs := events(t, s); len(evs) != 2 {
		t.Errorf("got %d events, want 2 (created and one terminal)", len(evs))
	}
}

// testResolvePastDeadline checks that a person's answer only wins before
// the deadline, while the timeout paths and cancel still succeed after it.
func testResolvePastDeadline(t *testing.T, s hitl.Store) {
	late := map[string]time.Time{
		"AtDeadline":    deadline,
		"AfterDeadline": deadline.Add(time.Hour),
	}
	for name, when := range late {
		t.Run("Answer"+name, func(t *testing.T) {
			in := create(t, s, askAt(t, base, 60))
			tr := answer(`"late"`, when)
			if name == "AtDeadline" {
				tr.From = in // changes nothing
			}
			refused(t, s, in, tr, hitl.ErrPastDeadline)
		})
	}
	ok := map[string]hitl.Transition{
		"AnswerJustBefore":  answer(`"in time"`, deadline.Add(-time.Millisecond)),
		"TimedOutAfter":     timedOut(`"default"`, deadline.Add(time.Second)),
		"ExpireAtDeadline":  expire(deadline),
		"ExpireLater":       expire(deadline.Add(time.Hour)),
		"CancelAfter":       cancel(deadline.Add(time.Hour)),
		"AnswerNoDeadline":  answer(`"any time"`, at(1_000_000)),
		"CancelBeforeStart": cancel(base.Add(-time.Hour)),
	}
	for name, tr := range ok {
		t.Run(name, func(t *testing.T) {
			in := askAt(t, base, 60)
			if name == "AnswerNoDeadline" {
				in.Deadline = time.Time{}
			}
			in = create(t, s, in)
			got, _ := resolve(t, s, in.ID, tr)
			if d := cmp.Diff(resolved(in, tr), got); d != "" {
				t.Errorf("Resolve returned (-want +got):\n%s", d)
			}
		})
	}
}

func testNextDeadline(t *testing.T, s hitl.Store) {
	if _, ok, err := s.NextDeadline(t.Context()); err != nil || ok {
		t.Fatalf("empty store: got ok %v, error %v; want no deadline", ok, err)
	}
	noDeadline := minimal()
	create(t, s, noDeadline)
	if _, ok, err := s.NextDeadline(t.Context()); err != nil || ok {
		t.Fatalf("only an interaction without deadline: got ok %v, error %v; want no deadline", ok, err)
	}
	second := create(t, s, askAt(t, base, 20))
	first := create(t, s, askAt(t, at(1), 9.5)) // created later, due earlier
	third := create(t, s, askAt(t, base, 30))
	check := func(want time.Time, wantOK bool) {
		t.Helper()
		got, ok, err := s.NextDeadline(t.Context())
		if err != nil {
			t.Fatalf("NextDeadline: %v", err)
		}
		if ok != wantOK || !got.Equal(want) {
			t.Errorf("NextDeadline: got %v, %v; want %v, %v", got, ok, want, wantOK)
		}
	}
	check(first.Deadline, true)
	resolve(t, s, first.ID, answer(`"x"`, at(2)))
	check(second.Deadline, true)
	resolve(t, s, second.ID, expire(second.Deadline))
	check(third.Deadline, true)
	resolve(t, s, third.ID, cancel(at(3)))
	check(time.Time{}, false)
}

func testDueInteractions(t *testing.T, s hitl.Store) {
	byDeadline := map[int]*hitl.Interaction{}
	for _, sec := range []int{4, 1, 1000, 3, 2} {
		byDeadline[sec] = create(t, s, askAt(t, base, float64(sec)))
	}
	create(t, s, minimal()) // no deadline: never due
	resolve(t, s, byDeadline[2].ID, cancel(at(1)))

	tests := []struct {
		name  string
		now   time.Time
		limit int
		want  []*hitl.Interaction
	}{
		{"BeforeAll", at(1).Add(-time.Millisecond), 10, nil},
		{"AtFirst", at(1), 10, []*hitl.Interaction{byDeadline[1]}},
		{"SkipsTerminal", at(3), 10, []*hitl.Interaction{byDeadline[1], byDeadline[3]}},
		{"Limit", at(3), 1, []*hitl.Interaction{byDeadline[1]}},
		{"Later", at(999), 10, []*hitl.Interaction{byDeadline[1], byDeadline[3], byDeadline[4]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.DueInteractions(t.Context(), tt.now, tt.limit)
			if err != nil {
				t.Fatalf("DueInteractions: %v", err)
			}
			if d := cmp.Diff(ids(tt.want), ids(got)); d != "" {
				t.Fatalf("IDs, earliest deadline first (-want +got):\n%s", d)
			}
			for i := range got {
				if d := cmp.Diff(tt.want[i], got[i]); d != "" {
					t.Errorf("interaction %d (-want +got):\n%s", i, d)
				}
			}
		})
	}
}
