package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
)

var (
	_ hitl.NotificationStore = (*Store)(nil)
	_ hitl.PushStore         = (*Store)(nil)
)

const notificationCols = `id, interaction_id, channel, recipient, responder, round, state, due_at, attempts, created_at, used_at`

// ChannelSettings returns the settings stored for channel, or ENOTFOUND.
func (s *Store) ChannelSettings(ctx context.Context, channel string) ([]byte, error) {
	var v string
	err := s.r.QueryRowContext(ctx, `SELECT settings FROM channel_settings WHERE channel = ?`, channel).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "no %s settings saved", channel)
	} else if err != nil {
		return nil, fmt.Errorf("read %s settings: %w", channel, err)
	}
	return []byte(v), nil
}

// SaveChannelSettings replaces the settings stored for channel.
func (s *Store) SaveChannelSettings(ctx context.Context, channel string, settings []byte) error {
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO channel_settings (channel, settings, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (channel) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at`,
			channel, string(settings), s.now().UnixMilli())
		return err
	})
	if err != nil {
		return fmt.Errorf("save %s settings: %w", channel, err)
	}
	return nil
}

// InitChannelSettings stores settings for channel unless some are stored,
// and returns what is stored.
func (s *Store) InitChannelSettings(ctx context.Context, channel string, settings []byte) ([]byte, error) {
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO channel_settings (channel, settings, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (channel) DO NOTHING`, channel, string(settings), s.now().UnixMilli())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("init %s settings: %w", channel, err)
	}
	return s.ChannelSettings(ctx, channel)
}

// ScheduleNotifications inserts the rows that do not exist yet and returns
// how many it inserted. A zero CreatedAt gets the store's clock.
func (s *Store) ScheduleNotifications(ctx context.Context, ns []*hitl.Notification) (int, error) {
	if len(ns) == 0 {
		return 0, nil
	}
	now := s.now()
	var n int
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		n, err = insertNotifications(ctx, tx, ns, now)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("schedule notifications: %w", err)
	}
	return n, nil
}

// insertNotifications inserts the rows of ns that do not exist yet, in
// tx, and returns how many it inserted. A zero CreatedAt is now.
func insertNotifications(ctx context.Context, tx *sql.Tx, ns []*hitl.Notification, now time.Time) (int, error) {
	n := 0
	for _, m := range ns {
		created := m.CreatedAt
		if created.IsZero() {
			created = now
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO notifications (`+notificationCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (interaction_id, channel, recipient, round) DO NOTHING`,
			m.ID, m.InteractionID, m.Channel, m.Recipient, m.Responder, m.Round, string(m.State),
			millis(m.DueAt), m.Attempts, created.UnixMilli(), millis(m.UsedAt))
		if err != nil {
			return 0, fmt.Errorf("interaction %s: %w", m.InteractionID, err)
		}
		k, err := res.RowsAffected()
		if err != nil {
			return 0, err
		}
		n += int(k)
	}
	return n, nil
}

// UnnotifiedInteractions returns up to limit pending interactions without
// a row on channel, oldest first.
func (s *Store) UnnotifiedInteractions(ctx context.Context, f hitl.UnnotifiedFilter) ([]*hitl.Interaction, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = hitl.MaxListLimit
	}
	where, args := "", []any{f.Channel}
	if f.After != nil {
		where, args = " AND (i.created_at, i.id) > (?, ?)", append(args, f.After.CreatedAt.UnixMilli(), f.After.ID)
	}
	if f.Workflow {
		where += " AND i.workflow IS NOT NULL"
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+columns("i.")+` FROM interactions i
		WHERE i.status = 'pending'
			AND NOT EXISTS (SELECT 1 FROM notifications n WHERE n.interaction_id = i.id AND n.channel = ?)`+where+`
		ORDER BY i.created_at, i.id LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("unnotified interactions: %w", err)
	}
	list, err := scanInteractions(rows, 0)
	if err != nil {
		return nil, fmt.Errorf("unnotified interactions: %w", err)
	}
	return list, nil
}

// NextNotificationDue returns the earliest due time of a row with work on
// channel.
func (s *Store) NextNotificationDue(ctx context.Context, channel string) (time.Time, bool, error) {
	var ms sql.NullInt64
	st, err := s.reader(ctx, `SELECT min(due_at) FROM notifications
		WHERE channel = ? AND due_at IS NOT NULL AND state IN ('scheduled', 'sending')`)
	if err == nil {
		err = st.QueryRowContext(ctx, channel).Scan(&ms)
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next notification due: %w", err)
	}
	return fromMillis(ms), ms.Valid, nil
}

// notificationLease is how email and Web Push rows are claimed: those
// of one channel (the work's argument).
var notificationLease = leased{
	table: "notifications", key: "id",
	work:      `channel = ? AND state IN ('scheduled', 'sending')`,
	claim:     `state = 'sending'`,
	returning: notificationCols,
}

// ClaimNotifications claims up to limit rows due at now in one write
// transaction: the single writer makes it a compare-and-set.
func (s *Store) ClaimNotifications(ctx context.Context, channel string, now, leaseUntil time.Time, limit int) ([]*hitl.Notification, error) {
	out, err := claimWithInteractions(ctx, s, notificationLease, now, leaseUntil, limit, []any{channel}, scanNotification,
		func(n *hitl.Notification) (string, **hitl.Interaction) { return n.InteractionID, &n.Interaction })
	if err != nil {
		return nil, fmt.Errorf("claim notifications: %w", err)
	}
	return out, nil
}

// UpdateNotification writes n if its row is still in state from with the
// given attempts, and reports whether it was.
func (s *Store) UpdateNotification(ctx context.Context, n *hitl.Notification, from hitl.NotificationState, attempts int) (bool, error) {
	var ok bool
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE notifications SET state = ?, due_at = ?, attempts = ?
			WHERE id = ? AND state = ? AND attempts = ?`,
			string(n.State), millis(n.DueAt), n.Attempts, n.ID, string(from), attempts)
		if err != nil {
			return err
		}
		k, err := res.RowsAffected()
		ok = k == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("update notification %s: %w", n.ID, err)
	}
	return ok, nil
}

// Notification returns the row with id and its interaction, or ENOTFOUND.
func (s *Store) Notification(ctx context.Context, id string) (*hitl.Notification, error) {
	n, err := scanNotification(s.r.QueryRowContext(ctx, `SELECT `+notificationCols+` FROM notifications WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "no such notification")
	} else if err != nil {
		return nil, fmt.Errorf("read notification: %w", err)
	}
	if n.Interaction, err = s.Interaction(ctx, n.InteractionID); err != nil {
		return nil, err
	}
	return n, nil
}

// UseNotification sets the row's used_at unless it is set.
func (s *Store) UseNotification(ctx context.Context, id string, now time.Time) (bool, error) {
	var ok bool
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE notifications SET used_at = ? WHERE id = ? AND used_at IS NULL`, now.UnixMilli(), id)
		if err != nil {
			return err
		}
		k, err := res.RowsAffected()
		ok = k == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("use notification: %w", err)
	}
	return ok, nil
}

func scanNotification(sc scanner) (*hitl.Notification, error) {
	var (
		n                    hitl.Notification
		state                string
		due, created, usedAt sql.NullInt64
	)
	if err := sc.Scan(&n.ID, &n.InteractionID, &n.Channel, &n.Recipient, &n.Responder, &n.Round, &state,
		&due, &n.Attempts, &created, &usedAt); err != nil {
		return nil, err
	}
	n.State, n.DueAt, n.CreatedAt, n.UsedAt = hitl.NotificationState(state), fromMillis(due), fromMillis(created), fromMillis(usedAt)
	return &n, nil
}

// SavePushSubscription adds p or replaces the one with its endpoint.
func (s *Store) SavePushSubscription(ctx context.Context, p *hitl.PushSubscription) error {
	created := p.CreatedAt
	if created.IsZero() {
		created = s.now()
	}
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO push_subscriptions (endpoint, user_name, p256dh, auth, untargeted, created_at)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (endpoint) DO UPDATE SET user_name = excluded.user_name, p256dh = excluded.p256dh,
				auth = excluded.auth, untargeted = excluded.untargeted, created_at = excluded.created_at`,
			p.Endpoint, p.User, p.P256DH, p.Auth, p.Untargeted, created.UnixMilli())
		return err
	})
	if err != nil {
		return fmt.Errorf("save push subscription: %w", err)
	}
	return nil
}

// PushSubscriptions returns user's subscriptions (everyone's for ""),
// oldest first.
func (s *Store) PushSubscriptions(ctx context.Context, user string) ([]*hitl.PushSubscription, error) {
	st, err := s.reader(ctx, `SELECT endpoint, user_name, p256dh, auth, untargeted, created_at
		FROM push_subscriptions WHERE ? = '' OR user_name = ? ORDER BY created_at, endpoint`)
	if err != nil {
		return nil, fmt.Errorf("list push subscriptions: %w", err)
	}
	rows, err := st.QueryContext(ctx, user, user)
	if err != nil {
		return nil, fmt.Errorf("list push subscriptions: %w", err)
	}
	defer rows.Close()
	var out []*hitl.PushSubscription
	for rows.Next() {
		var (
			p       hitl.PushSubscription
			created int64
		)
		if err := rows.Scan(&p.Endpoint, &p.User, &p.P256DH, &p.Auth, &p.Untargeted, &created); err != nil {
			return nil, fmt.Errorf("list push subscriptions: %w", err)
		}
		p.CreatedAt = time.UnixMilli(created).UTC()
		out = append(out, &p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list push subscriptions: %w", err)
	}
	return out, nil
}

// DeletePushSubscription removes the subscription with endpoint (of user,
// unless user is "").
func (s *Store) DeletePushSubscription(ctx context.Context, user, endpoint string) (bool, error) {
	var ok bool
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM push_subscriptions WHERE endpoint = ? AND (? = '' OR user_name = ?)`, endpoint, user, user)
		if err != nil {
			return err
		}
		k, err := res.RowsAffected()
		ok = k == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("delete push subscription: %w", err)
	}
	return ok, nil
}
