package storetest

import (
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// purge runs one batch of PurgeEnded, which must succeed.
func purge(t *testing.T, s hitl.Store, p hitl.Purge) *hitl.Purged {
	t.Helper()
	got, err := s.PurgeEnded(t.Context(), p)
	if err != nil {
		t.Fatalf("PurgeEnded(%+v): %v", p, err)
	}
	return got
}

// purgeAll purges in batches until the cursor runs out and returns the
// IDs and row counts of every batch together.
func purgeAll(t *testing.T, s hitl.Store, p hitl.Purge) ([]string, map[string]int, int) {
	t.Helper()
	var (
		all     []string
		rows    = map[string]int{}
		batches int
	)
	for {
		got := purge(t, s, p)
		batches++
		all = append(all, got.IDs...)
		for table, n := range got.Rows {
			rows[table] += n
		}
		if got.Next == "" {
			return all, rows, batches
		}
		if batches > 1000 {
			t.Fatal("PurgeEnded: the cursor never runs out")
		}
		p.After = got.Next
	}
}

// purgedThrough returns the store's PurgedThrough.
func purgedThrough(t *testing.T, s hitl.Store) int64 {
	t.Helper()
	seq, err := s.PurgedThrough(t.Context())
	if err != nil {
		t.Fatalf("PurgedThrough: %v", err)
	}
	return seq
}

// notFound checks that the interactions with ids are gone.
func notFound(t *testing.T, s hitl.Store, ids ...string) {
	t.Helper()
	for _, id := range ids {
		_, err := s.Interaction(t.Context(), id)
		if hitl.ErrorCode(err) != hitl.ENOTFOUND {
			t.Errorf("Interaction(%s) after purge: got error %v, want not found", id, err)
		}
	}
}

// eventIDs returns the interaction of each event, in order.
func eventIDs(evs []*hitl.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.InteractionID
	}
	return out
}

// sorted returns a sorted copy of ids.
func sorted(ids []string) []string {
	out := slices.Clone(ids)
	sort.Strings(out)
	return out
}

// testPurgeEnded purges what ended before the cut-off with everything that
// belongs to it, and keeps what is pending, what ended later, and their
// events, in order.
func testPurgeEnded(t *testing.T, s hitl.Store) {
	answered := create(t, s, askAt(t, base, 600))
	expired := create(t, s, askAt(t, at(1), 60))
	cancelled := create(t, s, askAt(t, at(2), 600))
	pending := create(t, s, askAt(t, at(3), 0))
	late := create(t, s, askAt(t, at(4), 600))
	appendEvent(t, s, notified(answered, 5))
	resolve(t, s, answered.ID, answer(`"yes"`, at(10)))
	resolve(t, s, expired.ID, expire(at(61)))
	resolve(t, s, cancelled.ID, cancel(at(30)))
	appendEvent(t, s, notified(pending, 40))
	late, _ = resolve(t, s, late.ID, answer(`"later"`, at(200)))
	ss, slack := s.(hitl.SlackStore)
	if slack {
		addSlackRows(t, ss, answered, pending)
	}
	last := lastSeq(t, s)
	before := events(t, s)
	if got := purgedThrough(t, s); got != 0 {
		t.Errorf("PurgedThrough before any purge: %d, want 0", got)
	}

	dry := purge(t, s, hitl.Purge{EndedBefore: at(100), DryRun: true})
	if got := purgedThrough(t, s); got != 0 {
		t.Errorf("PurgedThrough after a dry run: %d, want 0", got)
	}
	got := purge(t, s, hitl.Purge{EndedBefore: at(100)})
	wantIDs := []string{answered.ID, expired.ID, cancelled.ID}
	wantRows := map[string]int{"interactions": 3, "events": 7}
	if slack {
		wantRows["slack_messages"], wantRows["slack_actions"] = 1, 2
	}
	checkPurged(t, "dry run", dry, wantIDs, wantRows)
	checkPurged(t, "purge", got, wantIDs, wantRows)

	notFound(t, s, wantIDs...)
	var newestPurged int64
	for _, ev := range before {
		if ev.InteractionID != pending.ID && ev.InteractionID != late.ID {
			newestPurged = ev.Seq
		}
	}
	if got := purgedThrough(t, s); got != newestPurged {
		t.Errorf("PurgedThrough: %d, want %d (the newest event purged)", got, newestPurged)
	}
	for _, in := range []*hitl.Interaction{pending, late} {
		get(t, s, in.ID)
	}
	var kept []*hitl.Event
	for _, ev := range before {
		if ev.InteractionID == pending.ID || ev.InteractionID == late.ID {
			kept = append(kept, ev)
		}
	}
	if d := cmp.Diff(kept, events(t, s)); d != "" {
		t.Errorf("events after purge (-want +got):\n%s", d)
	}
	if got := lastSeq(t, s); got != last {
		t.Errorf("LastEventSeq after purge: got %d, want %d", got, last)
	}
	if slack {
		checkSlackPurged(t, ss, answered, pending)
	}

	again := purge(t, s, hitl.Purge{EndedBefore: at(100)})
	if len(again.IDs) != 0 || again.Rows["events"] != 0 {
		t.Errorf("second purge: got %v %v, want nothing left to purge", again.IDs, again.Rows)
	}
	if got := purgedThrough(t, s); got != newestPurged {
		t.Errorf("PurgedThrough after a purge of nothing: %d, want %d", got, newestPurged)
	}
	// The log goes on after the newest number it ever had.
	ev := appendEvent(t, s, notified(pending, 300))
	if ev.Seq <= last {
		t.Errorf("Seq after purge: got %d, want > %d", ev.Seq, last)
	}
}

// addSlackRows gives answered and pending a Slack message each, and
// answered two Slack actions and pending one.
func addSlackRows(t *testing.T, ss hitl.SlackStore, answered, pending *hitl.Interaction) {
	t.Helper()
	if _, err := ss.ScheduleSlackMessages(t.Context(), []*hitl.SlackMessage{
		{InteractionID: answered.ID, State: hitl.SlackScheduled, DueAt: at(120), CreatedAt: base},
		{InteractionID: pending.ID, State: hitl.SlackScheduled, DueAt: at(123), CreatedAt: at(3)},
	}); err != nil {
		t.Fatal(err)
	}
	if err := ss.AddSlackActions(t.Context(), []*hitl.SlackAction{
		{Token: "tok-answered-1", InteractionID: answered.ID, Kind: "option", OptionKey: "approve", CreatedAt: at(120)},
		{Token: "tok-answered-2", InteractionID: answered.ID, Kind: "option", OptionKey: "reject", CreatedAt: at(120)},
		{Token: "tok-pending", InteractionID: pending.ID, Kind: "open", CreatedAt: at(123)},
	}); err != nil {
		t.Fatal(err)
	}
}

// checkPurged checks what a purge (or its dry run) reports.
func checkPurged(t *testing.T, what string, got *hitl.Purged, wantIDs []string, wantRows map[string]int) {
	t.Helper()
	if d := cmp.Diff(wantIDs, got.IDs); d != "" {
		t.Errorf("%s: IDs (-want +got):\n%s", what, d)
	}
	for table, n := range wantRows {
		if got.Rows[table] != n {
			t.Errorf("%s: Rows[%q] = %d, want %d (all: %v)", what, table, got.Rows[table], n, got.Rows)
		}
	}
	if got.Next != "" {
		t.Errorf("%s: Next = %q, want \"\" (one batch holds everything)", what, got.Next)
	}
}

// checkSlackPurged checks that the purged interaction's Slack rows went
// and the pending one's stayed (see addSlackRows).
func checkSlackPurged(t *testing.T, ss hitl.SlackStore, answered, pending *hitl.Interaction) {
	t.Helper()
	if _, err := ss.SlackMessage(t.Context(), answered.ID); hitl.ErrorCode(err) != hitl.ENOTFOUND {
		t.Errorf("Slack message of a purged interaction: got %v, want not found", err)
	}
	if _, err := ss.SlackAction(t.Context(), "tok-answered-1"); hitl.ErrorCode(err) != hitl.ENOTFOUND {
		t.Errorf("Slack action of a purged interaction: got %v, want not found", err)
	}
	if _, err := ss.SlackMessage(t.Context(), pending.ID); err != nil {
		t.Errorf("Slack message of a pending interaction: %v", err)
	}
	if _, err := ss.SlackAction(t.Context(), "tok-pending"); err != nil {
		t.Errorf("Slack action of a pending interaction: %v", err)
	}
}

// testPurgeKeepsNewestEvent keeps the interaction of the newest event,
// however old, so that the sequence never goes back and a number is never
// handed out twice; it goes once a newer event exists.
func testPurgeKeepsNewestEvent(t *testing.T, s hitl.Store) {
	in := create(t, s, askAt(t, base, 60))
	_, ev := resolve(t, s, in.ID, cancel(at(1)))
	got := purge(t, s, hitl.Purge{EndedBefore: at(1000)})
	if len(got.IDs) != 0 {
		t.Fatalf("PurgeEnded: deleted %v, want the interaction of the newest event kept", got.IDs)
	}
	if seq := lastSeq(t, s); seq != ev.Seq {
		t.Errorf("LastEventSeq: got %d, want %d", seq, ev.Seq)
	}
	next := create(t, s, askAt(t, at(2), 60))
	got = purge(t, s, hitl.Purge{EndedBefore: at(1000)})
	if d := cmp.Diff([]string{in.ID}, got.IDs); d != "" {
		t.Errorf("PurgeEnded once a newer event exists (-want +got):\n%s", d)
	}
	evs := events(t, s)
	if len(evs) != 1 || evs[0].InteractionID != next.ID || evs[0].Seq <= ev.Seq {
		t.Errorf("events: got %v, want only the created event of %s after seq %d", eventIDs(evs), next.ID, ev.Seq)
	}
}

// testPurgeBatches goes through many interactions in batches, with the
// cursor stepping over those it keeps; a dry run finds the same.
func testPurgeBatches(t *testing.T, s hitl.Store) {
	var ended, keep []string
	for i := range 25 {
		in := create(t, s, askAt(t, at(i), 600))
		switch {
		case i%5 == 2:
			keep = append(keep, in.ID) // pending
		case i%5 == 4:
			resolve(t, s, in.ID, answer(`"late"`, at(500))) // ended after the cut-off
			keep = append(keep, in.ID)
		default:
			resolve(t, s, in.ID, answer(`"yes"`, at(100+i)))
			ended = append(ended, in.ID)
		}
	}
	p := hitl.Purge{EndedBefore: at(400), Limit: 4}
	dryP := p
	dryP.DryRun = true
	dry, dryRows, _ := purgeAll(t, s, dryP)
	if d := cmp.Diff(ended, dry); d != "" {
		t.Errorf("dry run: IDs (-want +got):\n%s", d)
	}
	for _, id := range ended {
		get(t, s, id) // a dry run deletes nothing
	}

	first := purge(t, s, p)
	if len(first.IDs) != 4 || first.Next == "" {
		t.Fatalf("first batch of 4: got %d IDs, next %q; want 4 and a cursor", len(first.IDs), first.Next)
	}
	p.After = first.Next
	rest, rows, batches := purgeAll(t, s, p)
	all := append(first.IDs, rest...)
	if d := cmp.Diff(ended, all); d != "" {
		t.Errorf("purged IDs, oldest created first (-want +got):\n%s", d)
	}
	rows["interactions"] += len(first.IDs)
	rows["events"] += first.Rows["events"]
	if rows["interactions"] != len(ended) || rows["events"] != 2*len(ended) {
		t.Errorf("rows: got %v, want %d interactions and %d events", rows, len(ended), 2*len(ended))
	}
	if dryRows["interactions"] != rows["interactions"] || dryRows["events"] != rows["events"] {
		t.Errorf("dry run rows %v, purge rows %v: want the same", dryRows, rows)
	}
	if batches > 1+(len(ended)-4)/4 {
		t.Errorf("%d batches after the first, want at most %d", batches, 1+(len(ended)-4)/4)
	}
	notFound(t, s, ended...)
	for _, id := range keep {
		get(t, s, id)
	}

	_, err := s.PurgeEnded(t.Context(), hitl.Purge{EndedBefore: at(400), After: "not a cursor"})
	wantCode(t, "PurgeEnded with a bad cursor", err, hitl.EINVALID)
}

// testPurgeConcurrent purges from several goroutines at once (several
// replicas): each interaction is deleted once, and none is left.
func testPurgeConcurrent(t *testing.T, s hitl.Store) {
	var want []string
	for i := range 60 {
		in := create(t, s, askAt(t, at(i), 600))
		resolve(t, s, in.ID, cancel(at(100+i)))
		want = append(want, in.ID)
	}
	newestPurged := lastSeq(t, s)
	create(t, s, askAt(t, at(100), 600)) // holds the newest event
	const n = 4
	var (
		mu   sync.Mutex
		got  []string
		errs = make([]error, n)
		wg   sync.WaitGroup
	)
	for i := range n {
		wg.Go(func() {
			p := hitl.Purge{EndedBefore: at(1000), Limit: 7}
			for {
				b, err := s.PurgeEnded(t.Context(), p)
				if err != nil {
					errs[i] = err
					return
				}
				mu.Lock()
				got = append(got, b.IDs...)
				mu.Unlock()
				if b.Next == "" {
					return
				}
				p.After = b.Next
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("purger %d: %v", i, err)
		}
	}
	if d := cmp.Diff(sorted(want), sorted(got)); d != "" {
		t.Errorf("purged IDs, each once (-want +got):\n%s", d)
	}
	if left, _, _ := purgeAll(t, s, hitl.Purge{EndedBefore: at(1000)}); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	if got := purgedThrough(t, s); got != newestPurged {
		t.Errorf("PurgedThrough: %d, want %d (the newest event purged, whichever purger did)", got, newestPurged)
	}
}

// testPurgeResume reads the log after a purge from points before, inside
// and after what was purged: each gets, in order, the events left after
// it (a live stream resuming from a purged event loses nothing it could
// still be given).
func testPurgeResume(t *testing.T, s hitl.Store) {
	old := create(t, s, askAt(t, base, 600))
	resolve(t, s, old.ID, answer(`"yes"`, at(1)))
	pending := create(t, s, askAt(t, at(2), 0))
	older := create(t, s, askAt(t, at(3), 600))
	resolve(t, s, older.ID, cancel(at(4)))
	recent := create(t, s, askAt(t, at(5), 600))
	resolve(t, s, recent.ID, answer(`"no"`, at(500)))
	before := events(t, s)
	purge(t, s, hitl.Purge{EndedBefore: at(100)})
	var kept []*hitl.Event
	for _, ev := range before {
		if ev.InteractionID == pending.ID || ev.InteractionID == recent.ID {
			kept = append(kept, ev)
		}
	}
	for _, after := range []int64{0, before[0].Seq, before[1].Seq, before[3].Seq, kept[0].Seq} {
		var want []*hitl.Event
		for _, ev := range kept {
			if ev.Seq > after {
				want = append(want, ev)
			}
		}
		got, err := s.Events(t.Context(), after, 100)
		if err != nil {
			t.Fatalf("Events(%d): %v", after, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("Events(%d) after purge (-want +got):\n%s", after, d)
		}
	}
}
