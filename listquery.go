package hitl

import (
	"time"
	"unicode/utf8"
)

// ListSort is the order of a list of interactions.
type ListSort string

// The orders a list can have.
const (
	// SortNewest lists newest first (by creation time, then id): the
	// default.
	SortNewest ListSort = "newest"
	// SortDeadline lists the soonest deadline first (then by id), those
	// without a deadline last: what a person should answer first.
	SortDeadline ListSort = "deadline"
)

// Bounds of a list's filters.
const (
	// MaxListValues is how many values one repeatable filter (agents,
	// types, channels) may name.
	MaxListValues = 50
	// MaxListQuery is the longest search text, in bytes.
	MaxListQuery = 200
	// MaxListProject is the longest project filter, in bytes.
	MaxListProject = 4096
)

// ExpiringWindow is how close a deadline is for InteractionCounts to count
// it as expiring: the inbox pins such questions at the top.
const ExpiringWindow = 5 * time.Minute

// InteractionCounts is how many interactions a filter selects: in all, per
// agent and per type, and how many expire within ExpiringWindow. ByAgent
// ignores the filter's Agents and ByType its Types, so that each count
// says what choosing that agent (or type) would list; Total and Expiring
// apply every filter.
type InteractionCounts struct {
	Total    int            `json:"total"`
	ByAgent  map[string]int `json:"by_agent"`
	ByType   map[Type]int   `json:"by_type"`
	Expiring int            `json:"expiring_within_5m"`
}

// CheckListFilter returns an EINVALID error naming what is wrong with f's
// status, limit, sort and filters, or nil.
func CheckListFilter(f ListFilter) error {
	if f.Status != "" && !f.Status.Valid() {
		return Errorf(EINVALID, "status must be pending, answered, expired or cancelled")
	}
	if f.Limit < 0 || f.Limit > MaxListLimit {
		return Errorf(EINVALID, "limit must be between 1 and %d", MaxListLimit)
	}
	switch f.Sort {
	case "", SortNewest, SortDeadline:
	default:
		return Errorf(EINVALID, "sort must be newest or deadline")
	}
	for _, t := range f.Types {
		if !t.Valid() {
			return Errorf(EINVALID, "type %q is not an interaction type", t)
		}
	}
	for name, n := range map[string]int{"agent": len(f.Agents), "type": len(f.Types), "channel": len(f.Channels)} {
		if n > MaxListValues {
			return Errorf(EINVALID, "%s may be given at most %d times", name, MaxListValues)
		}
	}
	if len(f.Query) > MaxListQuery {
		return Errorf(EINVALID, "q must be at most %d bytes", MaxListQuery)
	}
	if !utf8.ValidString(f.Query) {
		return Errorf(EINVALID, "q must be UTF-8 text")
	}
	if len(f.Project) > MaxListProject || !utf8.ValidString(f.Project) {
		return Errorf(EINVALID, "project must be UTF-8 text of at most %d bytes", MaxListProject)
	}
	return nil
}

// String describes the sort for messages.
func (s ListSort) String() string {
	if s == "" {
		return string(SortNewest)
	}
	return string(s)
}

// ByDeadline reports whether s lists the soonest deadline first.
func (s ListSort) ByDeadline() bool { return s == SortDeadline }

// ErrCursorSort returns the EINVALID error of a cursor that was made for
// an order other than s (or not by the store at all).
func ErrCursorSort(s ListSort) error {
	return Errorf(EINVALID, "cursor is not valid for sort=%s; pass the cursor of a previous page", s)
}
