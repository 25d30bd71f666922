package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
)

// scanner is a *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}

// scanInteraction reads the interactionColumns of one row, after the
// columns scanned into before (for a JOIN).
func scanInteraction(sc scanner, before ...any) (*hitl.Interaction, error) {
	var (
		in                                  hitl.Interaction
		options, schema, def, meta, targets []byte
		notify, review, argsDiff, workflow  []byte
		value                               []byte
		ruleID                              string
		deadline, respondedAt               sql.NullInt64
		createdAt                           int64
		respondedBy, channel, reason, key   string
		timedOut                            bool
	)
	dest := append(before,
		&in.ID, &in.Type, &in.Question, &in.Context, &options, &schema, &def,
		&in.Timeout, &deadline, &in.OnTimeout, &in.IdempotencyKey, &in.SourceAgent, &in.SessionID,
		&meta, &targets, &in.CreatedBy, &in.CreatedVia, &createdAt, &in.RequestHash, &in.Status,
		&value, &respondedBy, &channel, &respondedAt, &timedOut, &reason,
		&notify, &key, &review, &argsDiff, &ruleID, &in.CallbackURL, &workflow,
	)
	if err := sc.Scan(dest...); err != nil {
		return nil, err
	}
	in.Deadline = fromMillis(deadline)
	in.CreatedAt = time.UnixMilli(createdAt).UTC()
	if schema != nil {
		in.FormSchema = json.RawMessage(schema)
	}
	if def != nil {
		in.DefaultResponse = json.RawMessage(def)
	}
	if err := unmarshal(options, &in.Options, "options"); err != nil {
		return nil, fmt.Errorf("interaction %s: %w", in.ID, err)
	}
	if err := unmarshal(meta, &in.Metadata, "metadata"); err != nil {
		return nil, fmt.Errorf("interaction %s: %w", in.ID, err)
	}
	if err := unmarshal(targets, &in.Targets, "targets"); err != nil {
		return nil, fmt.Errorf("interaction %s: %w", in.ID, err)
	}
	if err := unmarshal(notify, &in.Notify, "notify"); err != nil {
		return nil, fmt.Errorf("interaction %s: %w", in.ID, err)
	}
	if review != nil {
		var r hitl.ActionReview
		if err := unmarshal(review, &r, "action"); err != nil {
			return nil, fmt.Errorf("interaction %s: %w", in.ID, err)
		}
		in.SetReview(&r)
	}
	if in.Status != hitl.StatusPending {
		in.Result = &hitl.Result{
			RespondedBy:    respondedBy,
			Channel:        channel,
			RespondedAt:    fromMillis(respondedAt),
			TimedOut:       timedOut,
			Reason:         reason,
			IdempotencyKey: key,
			RuleID:         ruleID,
		}
		if value != nil {
			in.Result.Value = json.RawMessage(value)
		}
		if argsDiff != nil {
			in.Result.ArgsDiff = json.RawMessage(argsDiff)
		}
	}
	if err := setWorkflow(&in, workflow); err != nil {
		return nil, err
	}
	return &in, nil
}

// insertArgs returns the values of in for sqlInsert, in interactionColumns
// order. A pending interaction has no result columns; one created
// answered has its result's.
func insertArgs(in *hitl.Interaction) ([]any, error) {
	options, err := marshal(in.Options, in.Options == nil, "options")
	if err != nil {
		return nil, err
	}
	meta, err := marshal(in.Metadata, in.Metadata == nil, "metadata")
	if err != nil {
		return nil, err
	}
	targets, err := marshal(in.Targets, in.Targets == nil, "targets")
	if err != nil {
		return nil, err
	}
	notify, err := marshal(in.Notify, in.Notify == nil, "notify")
	if err != nil {
		return nil, err
	}
	review := in.Review()
	action, err := encode(review, review == nil, "action")
	if err != nil {
		return nil, err
	}
	r := in.Result
	if r == nil {
		r = &hitl.Result{}
	}
	return []any{
		in.ID, string(in.Type), in.Question, in.Context, options, text(in.FormSchema), text(in.DefaultResponse),
		in.Timeout, millis(in.Deadline), string(in.OnTimeout), in.IdempotencyKey, in.SourceAgent, in.SessionID,
		meta, targets, in.CreatedBy, in.CreatedVia, in.CreatedAt.UnixMilli(), in.RequestHash, string(in.Status),
		text(r.Value), r.RespondedBy, r.Channel, millis(r.RespondedAt), r.TimedOut, r.Reason,
		notify, r.IdempotencyKey, action, text(r.ArgsDiff), r.RuleID, in.CallbackURL, text(in.WorkflowJSON()),
	}, nil
}

// millis returns t as unix milliseconds, or NULL for the zero time.
func millis(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

// fromMillis is the inverse of millis.
func fromMillis(ms sql.NullInt64) time.Time {
	if !ms.Valid {
		return time.Time{}
	}
	return time.UnixMilli(ms.Int64).UTC()
}

// truncate returns t as it reads back from the store: UTC, whole
// milliseconds, zero staying zero.
func truncate(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return time.UnixMilli(t.UnixMilli()).UTC()
}

// text returns raw JSON as a TEXT value, or NULL when it is nil. (Bound as
// []byte it would be a BLOB, which a STRICT TEXT column refuses.)
func text(raw []byte) any {
	if raw == nil {
		return nil
	}
	return string(raw)
}

// marshal encodes v as a TEXT value, or NULL when isNil.
func marshal(v any, isNil bool, what string) (any, error) {
	if isNil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", what, err)
	}
	return string(b), nil
}

// encode is marshal for values that hold raw JSON (an action's args, a
// rule's match): HTML characters are kept as they are, so the JSON reads
// back byte for byte as it was given.
func encode(v any, isNil bool, what string) (any, error) {
	if isNil {
		return nil, nil
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode %s: %w", what, err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// unmarshal decodes a TEXT value into dst, leaving dst nil for NULL.
func unmarshal(b []byte, dst any, what string) error {
	if b == nil {
		return nil
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("decode %s: %w", what, err)
	}
	return nil
}
