package postgres

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/jackc/pgx/v5"
)

// interactionColumns are the columns scanInteraction reads, in order.
var interactionColumns = []string{
	"id", "type", "question", "context", "options", "form_schema", "default_response",
	"timeout", "deadline", "on_timeout", "idempotency_key", "source_agent", "session_id",
	"metadata", "targets", "created_by", "created_via", "created_at", "request_hash", "status",
	"result_value", "responded_by", "result_channel", "responded_at", "timed_out", "reason",
	"notify", "answer_key", "action", "args_diff", "rule_id", "callback_url", "workflow",
}

// notNull are the interaction columns that are never NULL, with a value
// of their type to read when a LEFT JOIN finds no interaction.
var notNull = map[string]string{
	"id": "''", "type": "''", "question": "''", "context": "''", "timeout": "0", "on_timeout": "''",
	"idempotency_key": "''", "source_agent": "''", "session_id": "''", "created_by": "''",
	"created_via": "''", "created_at": "'epoch'::timestamptz", "request_hash": "''", "status": "''",
	"responded_by": "''", "result_channel": "''", "timed_out": "false", "reason": "''", "answer_key": "''", "rule_id": "''", "callback_url": "''",
}

// joinedColumns is columns(prefix) for a LEFT JOIN: the columns that are
// never NULL read as notNull's values when there is no interaction.
func joinedColumns(prefix string) string {
	cs := make([]string, len(interactionColumns))
	for i, c := range interactionColumns {
		cs[i] = prefix + c
		if def, ok := notNull[c]; ok {
			cs[i] = "coalesce(" + prefix + c + ", " + def + ")"
		}
	}
	return strings.Join(cs, ", ")
}

// columns lists interactionColumns for a SELECT or RETURNING, each
// prefixed with prefix (such as "i.").
func columns(prefix string) string {
	return prefix + strings.Join(interactionColumns, ", "+prefix)
}

// scanInteraction reads the interactionColumns of one row, after the
// columns scanned into before (for a JOIN or a CTE).
func scanInteraction(row pgx.Row, before ...any) (*hitl.Interaction, error) {
	var (
		in                                  hitl.Interaction
		options, schema, def, meta, targets *string
		notify, review, argsDiff, workflow  *string
		value                               *string
		ruleID                              string
		deadline, respondedAt               *time.Time
		createdAt                           time.Time
		typ, onTimeout, status              string
		respondedBy, channel, reason, key   string
		timedOut                            bool
	)
	dest := append(before,
		&in.ID, &typ, &in.Question, &in.Context, &options, &schema, &def,
		&in.Timeout, &deadline, &onTimeout, &in.IdempotencyKey, &in.SourceAgent, &in.SessionID,
		&meta, &targets, &in.CreatedBy, &in.CreatedVia, &createdAt, &in.RequestHash, &status,
		&value, &respondedBy, &channel, &respondedAt, &timedOut, &reason,
		&notify, &key, &review, &argsDiff, &ruleID, &in.CallbackURL, &workflow,
	)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	in.Type, in.OnTimeout, in.Status = hitl.Type(typ), hitl.OnTimeout(onTimeout), hitl.Status(status)
	in.Deadline = utc(deadline)
	in.CreatedAt = createdAt.UTC()
	in.FormSchema = rawJSON(schema)
	in.DefaultResponse = rawJSON(def)
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
			Value:          rawJSON(value),
			RespondedBy:    respondedBy,
			Channel:        channel,
			RespondedAt:    utc(respondedAt),
			TimedOut:       timedOut,
			Reason:         reason,
			IdempotencyKey: key,
			ArgsDiff:       rawJSON(argsDiff),
			RuleID:         ruleID,
		}
	}
	if err := setWorkflow(&in, workflow); err != nil {
		return nil, err
	}
	return &in, nil
}

// scanInteractions reads every row and closes rows.
func scanInteractions(rows pgx.Rows, capacity int) ([]*hitl.Interaction, error) {
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

// insertArgs returns the values of in for sqlCreate's first 32
// parameters: interactionColumns up to request_hash, notify and action,
// then the status and the result (none for a pending interaction), then
// callback_url and the workflow.
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
		in.Timeout, timestamp(in.Deadline), string(in.OnTimeout), in.IdempotencyKey, in.SourceAgent, in.SessionID,
		meta, targets, in.CreatedBy, in.CreatedVia, in.CreatedAt, in.RequestHash,
		notify, action,
		string(in.Status), text(r.Value), r.RespondedBy, r.Channel, timestamp(r.RespondedAt), r.TimedOut, r.Reason, text(r.ArgsDiff), r.RuleID,
		in.CallbackURL, text(in.WorkflowJSON()),
	}, nil
}

// timestamp returns t for a nullable timestamptz: NULL for the zero time.
func timestamp(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// utc is the inverse of timestamp, in UTC.
func utc(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// truncate returns t as it reads back from the store: UTC, whole
// milliseconds, zero staying zero.
func truncate(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return time.UnixMilli(t.UnixMilli()).UTC()
}

// text returns raw JSON as a nullable text value: NULL when it is nil.
func text(raw []byte) *string {
	if raw == nil {
		return nil
	}
	s := string(raw)
	return &s
}

// rawJSON is the inverse of text.
func rawJSON(s *string) json.RawMessage {
	if s == nil {
		return nil
	}
	return json.RawMessage(*s)
}

// marshal encodes v as a nullable text value: NULL when isNil.
func marshal(v any, isNil bool, what string) (*string, error) {
	if isNil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", what, err)
	}
	s := string(b)
	return &s, nil
}

// encode is marshal for values that hold raw JSON (an action's args, a
// rule's match): HTML characters are kept as they are, so the JSON reads
// back byte for byte as it was given.
func encode(v any, isNil bool, what string) (*string, error) {
	if isNil {
		return nil, nil
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode %s: %w", what, err)
	}
	s := strings.TrimSuffix(b.String(), "\n")
	return &s, nil
}

// unmarshal decodes a nullable text value into dst, leaving dst nil for
// NULL.
func unmarshal(s *string, dst any, what string) error {
	if s == nil {
		return nil
	}
	if err := json.Unmarshal([]byte(*s), dst); err != nil {
		return fmt.Errorf("decode %s: %w", what, err)
	}
	return nil
}
