package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/hitl-sh/hitl"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// CreateInteraction inserts in as a pending interaction, with its created
// event, in one transaction. An empty in.ID gets a UUIDv7, a zero
// CreatedAt the store's clock; times are kept to the millisecond. in is not
// modified: the stored interaction is returned. When (CreatedBy,
// IdempotencyKey) exists already, nothing is written and the existing
// interaction is returned with existed true. An interaction already
// answered (see hitl.Store) is inserted so, with its answered event (the
// created event's Next) in the same transaction.
func (s *Store) CreateInteraction(ctx context.Context, in *hitl.Interaction) (*hitl.Interaction, *hitl.Event, bool, error) {
	return s.createInteraction(ctx, in, nil)
}

// CreateInteractionAtRulesVersion implements hitl.RuleStore: the
// version is read in the write transaction, which holds the database's
// write lock and sees every write committed before it, by any process,
// and those of the batch before it.
func (s *Store) CreateInteractionAtRulesVersion(ctx context.Context, in *hitl.Interaction, version int64) (*hitl.Interaction, *hitl.Event, bool, error) {
	return s.createInteraction(ctx, in, &version)
}

// createInteraction is CreateInteraction, only while the rules' version is
// *rulesVersion when that is not nil.
func (s *Store) createInteraction(ctx context.Context, in *hitl.Interaction, rulesVersion *int64) (*hitl.Interaction, *hitl.Event, bool, error) {
	got := *in
	if got.ID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return nil, nil, false, fmt.Errorf("create interaction: mint id: %w", err)
		}
		got.ID = id.String()
	}
	if got.CreatedAt.IsZero() {
		got.CreatedAt = s.now()
	}
	got.CreatedAt = truncate(got.CreatedAt)
	got.Deadline = truncate(got.Deadline)
	answered := createdAnswered(&got)
	args, err := insertArgs(&got)
	if err != nil {
		return nil, nil, false, fmt.Errorf("create interaction: %w", err)
	}
	ev := &hitl.Event{
		Type:          hitl.EventCreated,
		InteractionID: got.ID,
		At:            got.CreatedAt,
		Actor:         got.CreatedBy,
		Channel:       got.CreatedVia,
		Interaction:   &got,
	}
	if answered {
		ev.Next = &hitl.Event{Type: hitl.EventAnswered, InteractionID: got.ID, At: got.Result.RespondedAt,
			Actor: got.Result.RespondedBy, Channel: got.Result.Channel, Interaction: &got}
	}

	insert := s.st.insert
	if rulesVersion != nil {
		insert, args = s.st.insertAtRulesVersion, append(slices.Clip(args), *rulesVersion)
	}
	var existing *hitl.Interaction
	err = s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		existing = nil
		res, err := tx.StmtContext(ctx, insert).ExecContext(ctx, args...)
		if err != nil {
			if isConstraint(err, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY) {
				return hitl.Errorf(hitl.ECONFLICT, "interaction %q already exists", got.ID)
			}
			return fmt.Errorf("insert: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("insert: %w", err)
		}
		if n == 0 {
			// Not inserted: the rules changed since the call was decided,
			// or the agent asked this before and that question is the
			// answer.
			existing, err = s.notInserted(ctx, tx, &got, rulesVersion)
			return err
		}
		if err := s.insertEvent(ctx, tx, ev); err != nil || ev.Next == nil {
			return err
		}
		return s.insertEvent(ctx, tx, ev.Next)
	})
	switch {
	case err != nil:
		return nil, nil, false, fmt.Errorf("create interaction: %w", err)
	case existing != nil:
		return existing, nil, true, nil
	}
	return &got, ev, false, nil
}

// notInserted says why the insert of in wrote nothing: the rules' version
// is no longer rulesVersion (hitl.ErrRulesChanged), which is checked
// first, as the decision it was made at must not be written; or in's
// agent already asked with its idempotency key, whose question it
// returns.
func (s *Store) notInserted(ctx context.Context, tx *sql.Tx, in *hitl.Interaction, rulesVersion *int64) (*hitl.Interaction, error) {
	if rulesVersion != nil {
		var v int64
		if err := tx.StmtContext(ctx, s.st.rulesVersionW).QueryRowContext(ctx).Scan(&v); err != nil {
			return nil, fmt.Errorf("read the rules' version: %w", err)
		}
		if v != *rulesVersion {
			return nil, hitl.ErrRulesChanged
		}
	}
	if in.IdempotencyKey == "" {
		return nil, fmt.Errorf("insert: interaction %s was not written, and has no idempotency key to find another by", in.ID)
	}
	existing, err := scanInteraction(tx.StmtContext(ctx, s.st.byKey).QueryRowContext(ctx, in.CreatedBy, in.IdempotencyKey))
	if err != nil {
		return nil, fmt.Errorf("find idempotency key: %w", err)
	}
	return existing, nil
}

// createdAnswered makes in, about to be created, pending with no result,
// unless it is answered with a result (a rule's answer): then it keeps it,
// copied, its time to the millisecond. It reports which.
func createdAnswered(in *hitl.Interaction) bool {
	if in.Status != hitl.StatusAnswered || in.Result == nil {
		in.Status, in.Result = hitl.StatusPending, nil
		return false
	}
	r := *in.Result
	r.RespondedAt = truncate(r.RespondedAt)
	r.Value, r.ArgsDiff = bytes.Clone(r.Value), bytes.Clone(r.ArgsDiff)
	in.Result = &r
	return true
}

// isConstraint reports whether err is the SQLite extended error code.
func isConstraint(err error, code int) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code() == code
}

// Interaction returns the interaction with the given id, or ENOTFOUND.
func (s *Store) Interaction(ctx context.Context, id string) (*hitl.Interaction, error) {
	in, err := scanInteraction(s.st.interaction.QueryRowContext(ctx, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "interaction %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("get interaction %s: %w", id, err)
	}
	return in, nil
}

// CountInteractions counts the interactions with the given status.
func (s *Store) CountInteractions(ctx context.Context, status hitl.Status) (int, error) {
	var n int
	if err := s.st.count.QueryRowContext(ctx, string(status)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s interactions: %w", status, err)
	}
	return n, nil
}

// scanInteractions reads every row and closes rows.
func scanInteractions(rows *sql.Rows, capacity int) ([]*hitl.Interaction, error) {
	defer rows.Close()
	list := make([]*hitl.Interaction, 0, capacity)
	for rows.Next() {
		in, err := scanInteraction(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, in)
	}
	return list, rows.Err()
}

// encodeCursor makes the opaque cursor of the page after the interaction
// created at ms with id.
func encodeCursor(ms int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(ms, 10) + ":" + id))
}

// decodeCursor is the inverse of encodeCursor.
func decodeCursor(c string) (int64, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		ms, id, ok := strings.Cut(string(b), ":")
		at, perr := strconv.ParseInt(ms, 10, 64)
		if ok && perr == nil && id != "" {
			return at, id, nil
		}
	}
	return 0, "", hitl.Errorf(hitl.EINVALID, "cursor is not valid; pass the cursor of a previous page")
}
