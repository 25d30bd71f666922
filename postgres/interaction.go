package postgres

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/hitl-sh/hitl"
	"github.com/jackc/pgx/v5"
)

// CreateInteraction inserts in as a pending interaction, with its created
// event, in one statement. An empty in.ID gets a UUIDv7, a zero CreatedAt
// the store's clock; times are kept to the millisecond. in is not
// modified: the stored interaction is returned. When (CreatedBy,
// IdempotencyKey) exists already, even in a transaction still committing,
// nothing is written and the existing interaction is returned with existed
// true. An interaction already answered (see hitl.Store) is inserted so,
// with its answered event (the created event's Next), in the same
// statement.
func (s *Store) CreateInteraction(ctx context.Context, in *hitl.Interaction) (*hitl.Interaction, *hitl.Event, bool, error) {
	return s.createInteraction(ctx, in, nil)
}

// CreateInteractionAtRulesVersion implements hitl.RuleStore:
// the version is read in the statement that inserts the interaction, so
// the action costs no round trip of its own to read it.
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
	args = append(args, s.channel)

	ev := &hitl.Event{
		Type:          hitl.EventCreated,
		InteractionID: got.ID,
		At:            got.CreatedAt,
		Actor:         got.CreatedBy,
		Channel:       got.CreatedVia,
		Interaction:   &got,
	}
	// The create statement and the reading of its row: ErrNoRows when the
	// idempotency key is taken, ErrRulesChanged when the rules' version
	// did not hold.
	sql, seqs := sqlCreate, []any{&ev.Seq, nil}
	if answered {
		ev.Next = &hitl.Event{Type: hitl.EventAnswered, InteractionID: got.ID, At: got.Result.RespondedAt,
			Actor: got.Result.RespondedBy, Channel: got.Result.Channel, Interaction: &got}
		sql, seqs = sqlCreateAnswered, append(seqs, &ev.Next.Seq, nil)
	}
	scan := func(r pgx.Row) error { return r.Scan(seqs...) }
	if rulesVersion != nil {
		sql, args = sqlCreateAtRulesVersion, append(args, *rulesVersion)
		if answered {
			sql = sqlCreateAnsweredAtRulesVersion
		}
		scan = func(r pgx.Row) error {
			var held bool
			var seq, next *int64
			dest := []any{&held, &seq, nil}
			if answered {
				dest = append(dest, &next, nil)
			}
			if err := r.Scan(dest...); err != nil {
				return err
			}
			switch {
			case !held:
				return hitl.ErrRulesChanged
			case seq == nil || answered && next == nil:
				return pgx.ErrNoRows
			}
			ev.Seq = *seq
			if answered {
				ev.Next.Seq = *next
			}
			return nil
		}
	}
	if answered {
		args = append(args, ev.Next.At, ev.Next.Actor, ev.Next.Channel)
	}
	err = s.group.write(ctx, createKey(&got), sql, args, scan)
	switch {
	case errors.Is(err, hitl.ErrRulesChanged):
		return nil, nil, false, fmt.Errorf("create interaction: %w", err)
	case errors.Is(err, pgx.ErrNoRows):
		// The key is taken; ON CONFLICT waited for its transaction to end.
		existing, err := s.byKey(ctx, got.CreatedBy, got.IdempotencyKey)
		if err != nil {
			return nil, nil, false, fmt.Errorf("create interaction: %w", err)
		}
		return existing, nil, true, nil
	case sqlState(err) == uniqueViolation:
		return nil, nil, false, hitl.Errorf(hitl.ECONFLICT, "interaction %q already exists", got.ID)
	case err != nil:
		return nil, nil, false, fmt.Errorf("create interaction: %w", badText(err))
	}
	return &got, ev, false, nil
}

// createKey is the key that orders a create in its group (see
// groupWrite): an idempotency key is a unique entry that another replica's
// group may be inserting too.
func createKey(in *hitl.Interaction) string {
	if in.IdempotencyKey == "" {
		return ""
	}
	return "k\x00" + in.CreatedBy + "\x00" + in.IdempotencyKey
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

// byKey returns the interaction created by agent with the idempotency key.
func (s *Store) byKey(ctx context.Context, agent, key string) (*hitl.Interaction, error) {
	var in *hitl.Interaction
	err := s.with(ctx, func(c *pgx.Conn) error {
		var err error
		in, err = scanInteraction(c.QueryRow(ctx, sqlByKey, agent, key))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("find idempotency key: %w", err)
	}
	return in, nil
}

// Interaction returns the interaction with the given id, or ENOTFOUND.
func (s *Store) Interaction(ctx context.Context, id string) (*hitl.Interaction, error) {
	in, err := s.interaction(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "interaction %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("get interaction %s: %w", id, badText(err))
	}
	return in, nil
}

// interaction reads one interaction; pgx.ErrNoRows when there is none.
func (s *Store) interaction(ctx context.Context, id string) (*hitl.Interaction, error) {
	var in *hitl.Interaction
	err := s.with(ctx, func(c *pgx.Conn) error {
		var err error
		in, err = scanInteraction(c.QueryRow(ctx, sqlInteraction, id))
		return err
	})
	return in, err
}

// CountInteractions counts the interactions with the given status.
func (s *Store) CountInteractions(ctx context.Context, status hitl.Status) (int, error) {
	var n int
	if err := s.queryRow(ctx, sqlCount, []any{string(status)}, &n); err != nil {
		return 0, fmt.Errorf("count %s interactions: %w", status, badText(err))
	}
	return n, nil
}

// encodeCursor makes the opaque cursor of the page after the interaction
// created at ms with id.
func encodeCursor(ms int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(ms, 10) + ":" + id))
}

// Cursor times are limited to years 1 to 9999, which timestamptz holds.
const (
	minCursorMillis = -62135596800000
	maxCursorMillis = 253402300799999
)

// decodeCursor is the inverse of encodeCursor.
func decodeCursor(c string) (time.Time, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		ms, id, ok := strings.Cut(string(b), ":")
		at, perr := strconv.ParseInt(ms, 10, 64)
		valid := ok && perr == nil && id != "" && utf8.ValidString(id) && strings.IndexByte(id, 0) < 0 &&
			at >= minCursorMillis && at <= maxCursorMillis
		if valid {
			return time.UnixMilli(at).UTC(), id, nil
		}
	}
	return time.Time{}, "", hitl.Errorf(hitl.EINVALID, "cursor is not valid; pass the cursor of a previous page")
}
