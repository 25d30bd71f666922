package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
)

var _ hitl.WebhookStore = (*Store)(nil)

const (
	webhookCols  = `id, url, events, description, secret, created_by, created_at`
	deliveryCols = `id, subscription_id, interaction_id, event, event_seq, url, state, attempts, due_at, created_at, delivered_at`
)

// CreateWebhook inserts a subscription.
func (s *Store) CreateWebhook(ctx context.Context, w *hitl.WebhookSubscription) error {
	events, err := json.Marshal(w.Events)
	if err != nil {
		return fmt.Errorf("create webhook: %w", err)
	}
	err = s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO webhook_subscriptions (`+webhookCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			w.ID, w.URL, string(events), w.Description, w.Secret, w.CreatedBy, w.CreatedAt.UnixMilli())
		return err
	})
	if err != nil {
		return fmt.Errorf("create webhook: %w", err)
	}
	return nil
}

// Webhooks returns every subscription, oldest first.
func (s *Store) Webhooks(ctx context.Context) ([]*hitl.WebhookSubscription, error) {
	st, err := s.reader(ctx, `SELECT `+webhookCols+` FROM webhook_subscriptions ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	rows, err := st.QueryContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	defer rows.Close()
	var out []*hitl.WebhookSubscription
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, fmt.Errorf("list webhooks: %w", err)
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// Webhook returns one subscription, or ENOTFOUND.
func (s *Store) Webhook(ctx context.Context, id string) (*hitl.WebhookSubscription, error) {
	w, err := scanWebhook(s.r.QueryRowContext(ctx, `SELECT `+webhookCols+` FROM webhook_subscriptions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "webhook %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("read webhook: %w", err)
	}
	return w, nil
}

func scanWebhook(sc scanner) (*hitl.WebhookSubscription, error) {
	var (
		w       hitl.WebhookSubscription
		events  string
		created int64
	)
	if err := sc.Scan(&w.ID, &w.URL, &events, &w.Description, &w.Secret, &w.CreatedBy, &created); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(events), &w.Events); err != nil {
		return nil, fmt.Errorf("webhook %s: events: %w", w.ID, err)
	}
	w.CreatedAt = time.UnixMilli(created).UTC()
	return &w, nil
}

// DeleteWebhook deletes a subscription with its deliveries and attempts.
func (s *Store) DeleteWebhook(ctx context.Context, id string) error {
	var n int64
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_attempts WHERE delivery_id IN
			(SELECT id FROM webhook_deliveries WHERE subscription_id = ?)`, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE subscription_id = ?`, id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_subscriptions WHERE id = ?`, id)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("delete webhook: %w", err)
	}
	if n == 0 {
		return hitl.Errorf(hitl.ENOTFOUND, "webhook %q not found", id)
	}
	return nil
}

// WebhookSecret returns the server's sealed secret, or ENOTFOUND.
func (s *Store) WebhookSecret(ctx context.Context) (string, error) {
	var sealed string
	err := s.r.QueryRowContext(ctx, `SELECT server_secret FROM webhook_state WHERE id = 1`).Scan(&sealed)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
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
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_state SET server_secret = ? WHERE id = 1 AND server_secret = ''`, sealed); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT server_secret FROM webhook_state WHERE id = 1`).Scan(&got)
	})
	if err != nil {
		return "", fmt.Errorf("store webhook secret: %w", err)
	}
	return got, nil
}

// WebhookCursor returns the last event turned into deliveries.
func (s *Store) WebhookCursor(ctx context.Context) (int64, error) {
	var seq int64
	st, err := s.reader(ctx, `SELECT event_cursor FROM webhook_state WHERE id = 1`)
	if err == nil {
		err = st.QueryRowContext(ctx).Scan(&seq)
	}
	if err != nil {
		return 0, fmt.Errorf("read webhook cursor: %w", err)
	}
	return seq, nil
}

// EnqueueWebhookDeliveries inserts ds and moves the cursor, if it is still
// at from.
func (s *Store) EnqueueWebhookDeliveries(ctx context.Context, from, to int64, ds []*hitl.WebhookDelivery) (bool, error) {
	var ok bool
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE webhook_state SET event_cursor = ? WHERE id = 1 AND event_cursor = ?`, to, from)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if ok = n == 1; err != nil || !ok {
			return err
		}
		for _, d := range ds {
			if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (`+deliveryCols+`, body)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				d.ID, d.SubscriptionID, d.InteractionID, string(d.Event), d.EventSeq, d.URL, string(d.State),
				d.Attempts, millis(d.DueAt), d.CreatedAt.UnixMilli(), millisPtr(d.DeliveredAt), string(d.Body)); err != nil {
				return fmt.Errorf("delivery %s: %w", d.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("enqueue webhook deliveries: %w", err)
	}
	return ok, nil
}

// NextWebhookDue returns the earliest due time of a delivery with work.
func (s *Store) NextWebhookDue(ctx context.Context) (time.Time, bool, error) {
	var ms sql.NullInt64
	st, err := s.reader(ctx, `SELECT min(due_at) FROM webhook_deliveries WHERE state IN ('pending', 'sending')`)
	if err == nil {
		err = st.QueryRowContext(ctx).Scan(&ms)
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next webhook due: %w", err)
	}
	return fromMillis(ms), ms.Valid, nil
}

// ClaimWebhookDeliveries claims up to limit deliveries due at now in one
// write transaction (the single writer makes it a compare-and-set).
func (s *Store) ClaimWebhookDeliveries(ctx context.Context, now, leaseUntil time.Time, limit int) ([]*hitl.WebhookDelivery, error) {
	due, err := s.anyDue(ctx, deliveryLease, now, nil)
	if err != nil {
		return nil, fmt.Errorf("claim webhook deliveries: %w", err)
	}
	if !due {
		return nil, nil
	}
	var out []*hitl.WebhookDelivery
	err = s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		if out, err = claimRows(ctx, s, tx, deliveryLease, now, leaseUntil, limit, nil, scanDeliveryWithBody); err != nil {
			return err
		}
		secrets := map[string]string{}
		for _, d := range out {
			if d.SubscriptionID == "" {
				continue
			}
			secret, ok := secrets[d.SubscriptionID]
			if !ok {
				err := tx.QueryRowContext(ctx, `SELECT secret FROM webhook_subscriptions WHERE id = ?`, d.SubscriptionID).Scan(&secret)
				if err != nil && !errors.Is(err, sql.ErrNoRows) {
					return err
				}
				secrets[d.SubscriptionID] = secret
			}
			d.Secret = secret
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim webhook deliveries: %w", err)
	}
	return out, nil
}

// deliveryLease is how webhook deliveries are claimed.
var deliveryLease = leased{
	table: "webhook_deliveries", key: "id",
	work:      `state IN ('pending', 'sending')`,
	claim:     `state = 'sending'`,
	returning: deliveryCols + `, body`,
}

// scanDeliveryWithBody reads deliveryCols and the body.
func scanDeliveryWithBody(sc scanner) (*hitl.WebhookDelivery, error) {
	var body string
	d, err := scanDelivery(sc, &body)
	if err != nil {
		return nil, err
	}
	d.Body = json.RawMessage(body)
	return d, nil
}

// scanDelivery reads deliveryCols, then the columns scanned into after.
func scanDelivery(sc scanner, after ...any) (*hitl.WebhookDelivery, error) {
	var (
		d              hitl.WebhookDelivery
		due, delivered sql.NullInt64
		created        int64
		event, state   string
	)
	dest := append([]any{&d.ID, &d.SubscriptionID, &d.InteractionID, &event, &d.EventSeq, &d.URL, &state,
		&d.Attempts, &due, &created, &delivered}, after...)
	if err := sc.Scan(dest...); err != nil {
		return nil, err
	}
	d.Event, d.State = hitl.WebhookEvent(event), hitl.DeliveryState(state)
	d.DueAt = fromMillis(due)
	d.CreatedAt = time.UnixMilli(created).UTC()
	if delivered.Valid {
		t := fromMillis(delivered)
		d.DeliveredAt = &t
	}
	return &d, nil
}

// RecordWebhookAttempt appends a and writes d, if the row is still
// sending with the given attempts.
func (s *Store) RecordWebhookAttempt(ctx context.Context, d *hitl.WebhookDelivery, a *hitl.WebhookAttempt, attempts int) (bool, error) {
	var ok bool
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET state = ?, due_at = ?, delivered_at = ?
			WHERE id = ? AND state = 'sending' AND attempts = ?`,
			string(d.State), millis(d.DueAt), millisPtr(d.DeliveredAt), d.ID, attempts)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if ok = n == 1; err != nil || !ok {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO webhook_attempts
			(delivery_id, interaction_id, attempt, at, status_code, error, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (delivery_id, attempt) DO NOTHING`,
			d.ID, d.InteractionID, a.Attempt, a.At.UnixMilli(), a.StatusCode, a.Error, a.DurationMS)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("record webhook attempt %s: %w", d.ID, err)
	}
	return ok, nil
}

// WebhookDeliveries returns deliveries newest first, with their history.
func (s *Store) WebhookDeliveries(ctx context.Context, f hitl.DeliveryFilter) ([]*hitl.WebhookDelivery, error) {
	where, arg := `interaction_id = ?`, f.InteractionID
	if f.SubscriptionID != "" {
		where, arg = `subscription_id = ?`, f.SubscriptionID
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+deliveryCols+` FROM webhook_deliveries WHERE `+where+`
		ORDER BY created_at DESC, id DESC LIMIT ?`, arg, deliveryLimit(f.Limit))
	if err != nil {
		return nil, fmt.Errorf("list webhook deliveries: %w", err)
	}
	var out []*hitl.WebhookDelivery
	byID := map[string]*hitl.WebhookDelivery{}
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("list webhook deliveries: %w", err)
		}
		d.History = []*hitl.WebhookAttempt{}
		out = append(out, d)
		byID[d.ID] = d
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("list webhook deliveries: %w", err)
	}
	if len(out) == 0 {
		return out, nil
	}
	ids := make([]string, 0, len(out))
	for _, d := range out {
		ids = append(ids, d.ID)
	}
	list, _ := json.Marshal(ids)
	rows, err = s.r.QueryContext(ctx, `SELECT delivery_id, attempt, at, status_code, error, duration_ms
		FROM webhook_attempts WHERE delivery_id IN (SELECT value FROM json_each(?)) ORDER BY delivery_id, attempt`, string(list))
	if err != nil {
		return nil, fmt.Errorf("list webhook attempts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var a hitl.WebhookAttempt
		var at int64
		if err := rows.Scan(&a.DeliveryID, &a.Attempt, &at, &a.StatusCode, &a.Error, &a.DurationMS); err != nil {
			return nil, fmt.Errorf("list webhook attempts: %w", err)
		}
		a.At = time.UnixMilli(at).UTC()
		byID[a.DeliveryID].History = append(byID[a.DeliveryID].History, &a)
	}
	return out, rows.Err()
}

// deliveryLimit returns a page size within 1..MaxListLimit.
func deliveryLimit(n int) int {
	switch {
	case n <= 0:
		return hitl.DefaultListLimit
	case n > hitl.MaxListLimit:
		return hitl.MaxListLimit
	}
	return n
}

// millisPtr is millis for an optional time.
func millisPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return millis(*t)
}
