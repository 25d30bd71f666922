package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/jackc/pgx/v5"
)

var _ hitl.WebhookStore = (*Store)(nil)

const (
	webhookCols  = `id, url, events, description, secret, created_by, created_at`
	deliveryCols = `id, subscription_id, interaction_id, event, event_seq, url, state, attempts, due_at, created_at, delivered_at`
)

// deliveryLease is how webhook deliveries are claimed. Each comes with its
// body and its subscription's secret.
var deliveryLease = leased{
	table: "webhook_deliveries", key: "id",
	work:  `state IN ('pending', 'sending')`,
	claim: `state = 'sending'`,
	returning: []string{prefixed("r.", strings.Split(deliveryCols, ", ")), "r.body",
		"coalesce((SELECT secret FROM webhook_subscriptions w WHERE w.id = r.subscription_id), '')"},
}

// CreateWebhook inserts a subscription.
func (s *Store) CreateWebhook(ctx context.Context, w *hitl.WebhookSubscription) error {
	events, err := json.Marshal(w.Events)
	if err != nil {
		return fmt.Errorf("create webhook: %w", err)
	}
	err = s.exec(ctx, `INSERT INTO webhook_subscriptions (`+webhookCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		w.ID, w.URL, string(events), w.Description, w.Secret, w.CreatedBy, s.stamp(w.CreatedAt))
	if err != nil {
		return fmt.Errorf("create webhook: %w", badText(err))
	}
	return nil
}

// Webhooks returns every subscription, oldest first.
func (s *Store) Webhooks(ctx context.Context) ([]*hitl.WebhookSubscription, error) {
	var out []*hitl.WebhookSubscription
	err := s.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, `SELECT `+webhookCols+` FROM webhook_subscriptions ORDER BY created_at, id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			w, err := scanWebhook(rows)
			if err != nil {
				return err
			}
			out = append(out, w)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	return out, nil
}

// Webhook returns one subscription, or ENOTFOUND.
func (s *Store) Webhook(ctx context.Context, id string) (*hitl.WebhookSubscription, error) {
	var w *hitl.WebhookSubscription
	err := s.with(ctx, func(c *pgx.Conn) error {
		var err error
		w, err = scanWebhook(c.QueryRow(ctx, `SELECT `+webhookCols+` FROM webhook_subscriptions WHERE id = $1`, id))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "webhook %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("read webhook: %w", badText(err))
	}
	return w, nil
}

func scanWebhook(row pgx.Row) (*hitl.WebhookSubscription, error) {
	var (
		w      hitl.WebhookSubscription
		events string
	)
	if err := row.Scan(&w.ID, &w.URL, &events, &w.Description, &w.Secret, &w.CreatedBy, &w.CreatedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(events), &w.Events); err != nil {
		return nil, fmt.Errorf("webhook %s: events: %w", w.ID, err)
	}
	w.CreatedAt = w.CreatedAt.UTC()
	return &w, nil
}

// DeleteWebhook deletes a subscription with its deliveries and attempts.
func (s *Store) DeleteWebhook(ctx context.Context, id string) error {
	var n int64
	err := s.with(ctx, func(c *pgx.Conn) error {
		return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `DELETE FROM webhook_attempts WHERE delivery_id IN
				(SELECT id FROM webhook_deliveries WHERE subscription_id = $1)`, id); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM webhook_deliveries WHERE subscription_id = $1`, id); err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, `DELETE FROM webhook_subscriptions WHERE id = $1`, id)
			n = tag.RowsAffected()
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("delete webhook: %w", badText(err))
	}
	if n == 0 {
		return hitl.Errorf(hitl.ENOTFOUND, "webhook %q not found", id)
	}
	return nil
}

// WebhookSecret returns the server's sealed secret, or ENOTFOUND.
func (s *Store) WebhookSecret(ctx context.Context) (string, error) {
	var sealed string
	err := s.queryRow(ctx, `SELECT server_secret FROM webhook_state WHERE id = 1`, nil, &sealed)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("read webhook secret: %w", err)
	}
	if sealed == "" {
		return "", hitl.Errorf(hitl.ENOTFOUND, "no webhook secret stored")
	}
	return sealed, nil
}

// InitWebhookSecret stores sealed unless a secret is stored, and returns
// the stored one.
func (s *Store) InitWebhookSecret(ctx context.Context, sealed string) (string, error) {
	var got string
	err := s.queryRow(ctx, `WITH up AS (
			UPDATE webhook_state SET server_secret = $1 WHERE id = 1 AND server_secret = '' RETURNING server_secret
		)
		SELECT server_secret FROM up UNION ALL
		SELECT server_secret FROM webhook_state WHERE id = 1 AND NOT EXISTS (SELECT 1 FROM up)`, []any{sealed}, &got)
	if err != nil {
		return "", fmt.Errorf("store webhook secret: %w", err)
	}
	return got, nil
}

// WebhookCursor returns the last event turned into deliveries.
func (s *Store) WebhookCursor(ctx context.Context) (int64, error) {
	var seq int64
	if err := s.queryRow(ctx, `SELECT event_cursor FROM webhook_state WHERE id = 1`, nil, &seq); err != nil {
		return 0, fmt.Errorf("read webhook cursor: %w", err)
	}
	return seq, nil
}

// EnqueueWebhookDeliveries inserts ds and moves the cursor, if it is still
// at from. The UPDATE takes the cursor's row lock first, so a second
// replica enqueueing the same events waits, then finds the cursor moved.
func (s *Store) EnqueueWebhookDeliveries(ctx context.Context, from, to int64, ds []*hitl.WebhookDelivery) (bool, error) {
	var ok bool
	err := s.with(ctx, func(c *pgx.Conn) error {
		ok = false
		return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `UPDATE webhook_state SET event_cursor = $1 WHERE id = 1 AND event_cursor = $2`, to, from)
			if err != nil || tag.RowsAffected() != 1 {
				return err
			}
			b := &pgx.Batch{}
			for _, d := range ds {
				b.Queue(`INSERT INTO webhook_deliveries (`+deliveryCols+`, body)
					VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
					d.ID, d.SubscriptionID, d.InteractionID, string(d.Event), d.EventSeq, d.URL, string(d.State),
					d.Attempts, timestamp(truncate(d.DueAt)), s.stamp(d.CreatedAt), d.DeliveredAt, string(d.Body))
			}
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return err
			}
			ok = true
			return nil
		})
	})
	if err != nil {
		return false, fmt.Errorf("enqueue webhook deliveries: %w", badText(err))
	}
	return ok, nil
}

// NextWebhookDue returns the earliest due time of a delivery with work.
func (s *Store) NextWebhookDue(ctx context.Context) (time.Time, bool, error) {
	var due *time.Time
	if err := s.queryRow(ctx, `SELECT min(due_at) FROM webhook_deliveries WHERE state IN ('pending', 'sending')`, nil, &due); err != nil {
		return time.Time{}, false, fmt.Errorf("next webhook due: %w", err)
	}
	return utc(due), due != nil, nil
}

// ClaimWebhookDeliveries claims up to limit deliveries due at now; a
// claimed row's lease keeps it from other replicas until leaseUntil.
func (s *Store) ClaimWebhookDeliveries(ctx context.Context, now, leaseUntil time.Time, limit int) ([]*hitl.WebhookDelivery, error) {
	out, err := claimRows(ctx, s, deliveryLease, false, now, leaseUntil, limit, nil, func(rows pgx.Rows) (*hitl.WebhookDelivery, error) {
		var body, secret string
		d, err := scanDelivery(rows, &body, &secret)
		if err != nil {
			return nil, err
		}
		d.Body, d.Secret = json.RawMessage(body), secret
		return d, nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim webhook deliveries: %w", err)
	}
	return out, nil
}

// scanDelivery reads deliveryCols, then the columns scanned into after.
func scanDelivery(row pgx.Row, after ...any) (*hitl.WebhookDelivery, error) {
	var (
		d              hitl.WebhookDelivery
		due, delivered *time.Time
		event, state   string
	)
	dest := append([]any{&d.ID, &d.SubscriptionID, &d.InteractionID, &event, &d.EventSeq, &d.URL, &state,
		&d.Attempts, &due, &d.CreatedAt, &delivered}, after...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	d.Event, d.State = hitl.WebhookEvent(event), hitl.DeliveryState(state)
	d.DueAt, d.CreatedAt = utc(due), d.CreatedAt.UTC()
	if delivered != nil {
		t := delivered.UTC()
		d.DeliveredAt = &t
	}
	return &d, nil
}

// RecordWebhookAttempt appends a and writes d, if the row is still
// sending with the given attempts.
func (s *Store) RecordWebhookAttempt(ctx context.Context, d *hitl.WebhookDelivery, a *hitl.WebhookAttempt, attempts int) (bool, error) {
	var ok bool
	var delivered *time.Time
	if d.DeliveredAt != nil {
		t := truncate(*d.DeliveredAt)
		delivered = &t
	}
	err := s.with(ctx, func(c *pgx.Conn) error {
		ok = false
		return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET state = $1, due_at = $2, delivered_at = $3
				WHERE id = $4 AND state = 'sending' AND attempts = $5`,
				string(d.State), timestamp(truncate(d.DueAt)), delivered, d.ID, attempts)
			if err != nil || tag.RowsAffected() != 1 {
				return err
			}
			ok = true
			_, err = tx.Exec(ctx, `INSERT INTO webhook_attempts
				(delivery_id, interaction_id, attempt, at, status_code, error, duration_ms) VALUES ($1, $2, $3, $4, $5, $6, $7)
				ON CONFLICT (delivery_id, attempt) DO NOTHING`,
				d.ID, d.InteractionID, a.Attempt, truncate(a.At), a.StatusCode, a.Error, a.DurationMS)
			return err
		})
	})
	if err != nil {
		return false, fmt.Errorf("record webhook attempt %s: %w", d.ID, badText(err))
	}
	return ok, nil
}

// WebhookDeliveries returns deliveries newest first, with their history.
func (s *Store) WebhookDeliveries(ctx context.Context, f hitl.DeliveryFilter) ([]*hitl.WebhookDelivery, error) {
	where, arg := `interaction_id = $1`, f.InteractionID
	if f.SubscriptionID != "" {
		where, arg = `subscription_id = $1`, f.SubscriptionID
	}
	limit := f.Limit
	switch {
	case limit <= 0:
		limit = hitl.DefaultListLimit
	case limit > hitl.MaxListLimit:
		limit = hitl.MaxListLimit
	}
	var out []*hitl.WebhookDelivery
	err := s.with(ctx, func(c *pgx.Conn) error {
		out = nil
		rows, err := c.Query(ctx, `SELECT `+deliveryCols+` FROM webhook_deliveries WHERE `+where+`
			ORDER BY created_at DESC, id DESC LIMIT $2`, arg, limit)
		if err != nil {
			return err
		}
		byID := map[string]*hitl.WebhookDelivery{}
		var ids []string
		for rows.Next() {
			d, err := scanDelivery(rows)
			if err != nil {
				rows.Close()
				return err
			}
			d.History = []*hitl.WebhookAttempt{}
			out = append(out, d)
			byID[d.ID] = d
			ids = append(ids, d.ID)
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(ids) == 0 {
			return err
		}
		rows, err = c.Query(ctx, `SELECT delivery_id, attempt, at, status_code, error, duration_ms
			FROM webhook_attempts WHERE delivery_id = ANY($1) ORDER BY delivery_id, attempt`, ids)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a hitl.WebhookAttempt
			if err := rows.Scan(&a.DeliveryID, &a.Attempt, &a.At, &a.StatusCode, &a.Error, &a.DurationMS); err != nil {
				return err
			}
			a.At = a.At.UTC()
			byID[a.DeliveryID].History = append(byID[a.DeliveryID].History, &a)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("list webhook deliveries: %w", badText(err))
	}
	return out, nil
}
