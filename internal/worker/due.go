package worker

import "time"

// Due is what a worker knows of its channel's due rows: when it last
// claimed them and read the next due time (a look), and that time.
// Between two looks, work that writes no row (an event no webhook wants,
// a question nobody subscribed to be pushed) costs the store nothing: rows
// the worker writes itself make it look again at once (Forget), rows
// another replica writes are claimed by that replica's worker (and, were
// it to crash first, here at the next look), and retries come due at a
// time some worker's timer was armed at.
type Due struct {
	known   bool      // checked and next hold; false forces a look
	checked time.Time // the last look
	next    time.Time // the earliest due row then; zero for none
}

// Skip reports whether a step may leave the due rows alone, and for how
// long: a look was made less than recheck ago, nothing was written since,
// and no row it saw is due yet.
func (d *Due) Skip(now time.Time, recheck time.Duration) (wait time.Duration, ok bool) {
	if !d.known {
		return 0, false
	}
	until := d.checked.Add(recheck)
	if !d.next.IsZero() && d.next.Before(until) {
		until = d.next
	}
	if !now.Before(until) {
		return 0, false
	}
	return until.Sub(now), true
}

// Forget makes the next step look: the worker wrote rows, failed, or is
// about to look.
func (d *Due) Forget() { d.known = false }

// Looked records a look at now that found next as the earliest due row
// (ok false: none), when next is still to come; a row already due (claimed
// by another replica a moment ago) leaves the next step to look again.
func (d *Due) Looked(now, next time.Time, ok bool) {
	switch {
	case !ok:
		*d = Due{known: true, checked: now}
	case next.After(now):
		*d = Due{known: true, checked: now, next: next}
	default:
		d.known = false
	}
}
