package hitl

import "time"

// Bounds of one purge batch (Purge.Limit). On SQLite a batch of 100
// interactions (with their events) commits in about 2 ms, and an answer
// that comes meanwhile waits for it: see BenchmarkPurgeWhileAnswering in
// broker.
const (
	DefaultPurgeLimit = 100
	MaxPurgeLimit     = 1000
)

// Purge selects one batch of ended interactions for Store.PurgeEnded to
// delete. Batches go through the interactions in the order they were
// created, oldest first: an interaction ends after it is created, so only
// those created before EndedBefore are looked at, and a cursor (After)
// lets the next batch start where this one stopped rather than look again
// at what it kept (pending interactions, those that ended later).
type Purge struct {
	// EndedBefore is the cut-off: interactions answered, expired or
	// cancelled before it go.
	EndedBefore time.Time
	// Limit is the most interactions the batch deletes; 0 means
	// DefaultPurgeLimit, and more than MaxPurgeLimit is MaxPurgeLimit.
	Limit int
	// After is the previous batch's Purged.Next; "" starts with the oldest
	// interaction. A cursor the store did not make is EINVALID.
	After string
	// DryRun finds and counts what the batch would delete, and deletes
	// nothing.
	DryRun bool
}

// Purged is what one batch deleted (or, for a dry run, would delete).
type Purged struct {
	// IDs are the interactions deleted.
	IDs []string
	// Rows counts the rows deleted, by table: "interactions" (len(IDs)),
	// "events", and each table of rows that belong to an interaction
	// ("slack_messages", "slack_actions", …).
	Rows map[string]int
	// Next is the cursor of the next batch (Purge.After), "" when no
	// interaction created before EndedBefore is left to look at.
	Next string
}

// BatchLimit returns p.Limit within its bounds.
func (p Purge) BatchLimit() int {
	switch {
	case p.Limit <= 0:
		return DefaultPurgeLimit
	case p.Limit > MaxPurgeLimit:
		return MaxPurgeLimit
	}
	return p.Limit
}
