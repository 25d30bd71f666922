package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/jackc/pgx/v5"
)

var (
	_ hitl.NotificationStore = (*Store)(nil)
	_ hitl.PushStore         = (*Store)(nil)
)

// notificationColumns are the notifications table's columns, in scan
// order.
var notificationColumns = []string{"id", "interaction_id", "channel", "recipient", "responder", "round", "state", "due_at", "attempts", "created_at", "used_at"}

var notificationCols = strings.Join(notificationColumns, ", ")

// notificationLease is how email and Web Push rows are claimed: those
// of one channel ($4).
var notificationLease = leased{
	table: "notifications", key: "id",
	work:      `channel = $4 AND state IN ('scheduled', 'sending')`,
	claim:     `state = 'sending'`,
	returning: []string{prefixed("r.", notificationColumns)},
}

// ChannelSettings returns the settings stored for channel, or ENOTFOUND.
func (s *Store) ChannelSettings(ctx context.Context, channel string) ([]byte, error) {
	var v string
	err := s.queryRow(ctx, `SELECT settings FROM channel_settings WHERE channel = $1`, []any{channel}, &v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "no %s settings saved", channel)
	} else if err != nil {
		return nil, fmt.Errorf("read %s settings: %w", channel, err)
	}
	return []byte(v), nil
}

// SaveChannelSettings replaces the settings stored for channel.
func (s *Store) SaveChannelSettings(ctx context.Context, channel string, settings []byte) error {
	err := s.exec(ctx, `INSERT INTO channel_settings (channel, settings, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (channel) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at`,
		channel, string(settings), s.stamp(time.Time{}))
	if err != nil {
		return fmt.Errorf("save %s settings: %w", channel, badText(err))
	}
	return nil
}

// InitChannelSettings stores settings for channel unless some are stored,
// and returns what is stored.
func (s *Store) InitChannelSettings(ctx context.Context, channel string, settings []byte) ([]byte, error) {
	err := s.exec(ctx, `INSERT INTO channel_settings (channel, settings, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (channel) DO NOTHING`, channel, string(settings), s.stamp(time.Time{}))
	if err != nil {
		return nil, fmt.Errorf("init %s settings: %w", channel, badText(err))
	}
	return s.ChannelSettings(ctx, channel)
}

// ScheduleNotifications inserts the rows that do not exist yet and returns
// how many it inserted. A zero CreatedAt gets the store's clock.
func (s *Store) ScheduleNotifications(ctx context.Context, ns []*hitl.Notification) (int, error) {
	if len(ns) == 0 {
		return 0, nil
	}
	n := 0
	err := s.with(ctx, func(c *pgx.Conn) error {
		b := &pgx.Batch{}
		for _, m := range ns {
			b.Queue(sqlInsertNotification, s.notificationArgs(m)...)
		}
		res := c.SendBatch(ctx, b)
		for range ns {
			tag, err := res.Exec()
			if err != nil {
				res.Close()
				return err
			}
			n += int(tag.RowsAffected())
		}
		return res.Close()
	})
	if err != nil {
		return 0, fmt.Errorf("schedule notifications: %w", badText(err))
	}
	return n, nil
}

// sqlInsertNotification inserts a row unless its key exists.
var sqlInsertNotification = `INSERT INTO notifications (` + notificationCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
	ON CONFLICT (interaction_id, channel, recipient, round) DO NOTHING`

// notificationArgs are sqlInsertNotification's arguments for m. A zero
// CreatedAt gets the store's clock.
func (s *Store) notificationArgs(m *hitl.Notification) []any {
	created := truncate(m.CreatedAt)
	if m.CreatedAt.IsZero() {
		created = s.stamp(time.Time{})
	}
	return []any{m.ID, m.InteractionID, m.Channel, m.Recipient, m.Responder, m.Round, string(m.State),
		timestamp(truncate(m.DueAt)), m.Attempts, created, timestamp(truncate(m.UsedAt))}
}

// UnnotifiedInteractions returns up to limit pending interactions without
// a row on channel, oldest first.
func (s *Store) UnnotifiedInteractions(ctx context.Context, f hitl.UnnotifiedFilter) ([]*hitl.Interaction, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = hitl.MaxListLimit
	}
	where, args := "", []any{f.Channel, limit}
	if f.After != nil {
		where, args = " AND (i.created_at, i.id) > ($3, $4)", append(args, f.After.CreatedAt, f.After.ID)
	}
	if f.Workflow {
		where += " AND i.workflow IS NOT NULL"
	}
	var list []*hitl.Interaction
	err := s.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, `SELECT `+columns("i.")+` FROM interactions i
			WHERE i.status = 'pending'
				AND NOT EXISTS (SELECT 1 FROM notifications n WHERE n.interaction_id = i.id AND n.channel = $1)`+where+`
			ORDER BY i.created_at, i.id LIMIT $2`, args...)
		if err != nil {
			return err
		}
		list, err = scanInteractions(rows, 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("unnotified interactions: %w", err)
	}
	return list, nil
}

// NextNotificationDue returns the earliest due time of a row with work on
// channel.
func (s *Store) NextNotificationDue(ctx context.Context, channel string) (time.Time, bool, error) {
	var due *time.Time
	err := s.queryRow(ctx, `SELECT min(due_at) FROM notifications
		WHERE channel = $1 AND due_at IS NOT NULL AND state IN ('scheduled', 'sending')`, []any{channel}, &due)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next notification due: %w", err)
	}
	return utc(due), due != nil, nil
}

// ClaimNotifications claims up to limit rows due at now; rows another
// replica is claiming at the same moment are skipped, not waited for.
func (s *Store) ClaimNotifications(ctx context.Context, channel string, now, leaseUntil time.Time, limit int) ([]*hitl.Notification, error) {
	out, err := claimRows(ctx, s, notificationLease, true, now, leaseUntil, limit, []any{channel}, func(rows pgx.Rows) (*hitl.Notification, error) {
		var n hitl.Notification
		dest := notificationDest(&n)
		in, err := scanInteraction(rows, dest.ptrs...)
		if err != nil {
			return nil, err
		}
		dest.finish()
		n.Interaction = in
		return &n, nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim notifications: %w", err)
	}
	return out, nil
}

// UpdateNotification writes n if its row is still in state from with the
// given attempts, and reports whether it was.
func (s *Store) UpdateNotification(ctx context.Context, n *hitl.Notification, from hitl.NotificationState, attempts int) (bool, error) {
	var ok bool
	err := s.with(ctx, func(c *pgx.Conn) error {
		tag, err := c.Exec(ctx, `UPDATE notifications SET state = $1, due_at = $2, attempts = $3
			WHERE id = $4 AND state = $5 AND attempts = $6`,
			string(n.State), timestamp(truncate(n.DueAt)), n.Attempts, n.ID, string(from), attempts)
		ok = tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("update notification %s: %w", n.ID, err)
	}
	return ok, nil
}

// Notification returns the row with id and its interaction, or ENOTFOUND.
func (s *Store) Notification(ctx context.Context, id string) (*hitl.Notification, error) {
	var n hitl.Notification
	err := s.with(ctx, func(c *pgx.Conn) error {
		dest := notificationDest(&n)
		var err error
		n.Interaction, err = scanInteraction(c.QueryRow(ctx, `SELECT `+prefixed("n.", notificationColumns)+`, `+columns("i.")+`
			FROM notifications n JOIN interactions i ON i.id = n.interaction_id WHERE n.id = $1`, id), dest.ptrs...)
		if err == nil {
			dest.finish()
		}
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "no such notification")
	} else if err != nil {
		return nil, fmt.Errorf("read notification: %w", badText(err))
	}
	return &n, nil
}

// UseNotification sets the row's used_at unless it is set.
func (s *Store) UseNotification(ctx context.Context, id string, now time.Time) (bool, error) {
	var ok bool
	err := s.with(ctx, func(c *pgx.Conn) error {
		tag, err := c.Exec(ctx, `UPDATE notifications SET used_at = $1 WHERE id = $2 AND used_at IS NULL`, truncate(now), id)
		ok = tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("use notification: %w", badText(err))
	}
	return ok, nil
}

// notificationScan is where a notification row's columns are scanned to,
// before the nullable ones are set on it.
type notificationScan struct {
	n         *hitl.Notification
	state     string
	due, used *time.Time
	ptrs      []any
}

func notificationDest(n *hitl.Notification) *notificationScan {
	d := &notificationScan{n: n}
	d.ptrs = []any{&n.ID, &n.InteractionID, &n.Channel, &n.Recipient, &n.Responder, &n.Round, &d.state,
		&d.due, &n.Attempts, &n.CreatedAt, &d.used}
	return d
}

func (d *notificationScan) finish() {
	d.n.State, d.n.DueAt, d.n.UsedAt, d.n.CreatedAt = hitl.NotificationState(d.state), utc(d.due), utc(d.used), d.n.CreatedAt.UTC()
}

// SavePushSubscription adds p or replaces the one with its endpoint.
func (s *Store) SavePushSubscription(ctx context.Context, p *hitl.PushSubscription) error {
	err := s.exec(ctx, `INSERT INTO push_subscriptions (endpoint, user_name, p256dh, auth, untargeted, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (endpoint) DO UPDATE SET user_name = excluded.user_name, p256dh = excluded.p256dh,
			auth = excluded.auth, untargeted = excluded.untargeted, created_at = excluded.created_at`,
		p.Endpoint, p.User, p.P256DH, p.Auth, p.Untargeted, s.stamp(p.CreatedAt))
	if err != nil {
		return fmt.Errorf("save push subscription: %w", badText(err))
	}
	return nil
}

// PushSubscriptions returns user's subscriptions (everyone's for ""),
// oldest first.
func (s *Store) PushSubscriptions(ctx context.Context, user string) ([]*hitl.PushSubscription, error) {
	var out []*hitl.PushSubscription
	err := s.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, `SELECT endpoint, user_name, p256dh, auth, untargeted, created_at
			FROM push_subscriptions WHERE $1 = '' OR user_name = $1 ORDER BY created_at, endpoint`, user)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p hitl.PushSubscription
			if err := rows.Scan(&p.Endpoint, &p.User, &p.P256DH, &p.Auth, &p.Untargeted, &p.CreatedAt); err != nil {
				return err
			}
			p.CreatedAt = p.CreatedAt.UTC()
			out = append(out, &p)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("list push subscriptions: %w", badText(err))
	}
	return out, nil
}

// DeletePushSubscription removes the subscription with endpoint (of user,
// unless user is "").
func (s *Store) DeletePushSubscription(ctx context.Context, user, endpoint string) (bool, error) {
	var ok bool
	err := s.with(ctx, func(c *pgx.Conn) error {
		tag, err := c.Exec(ctx, `DELETE FROM push_subscriptions WHERE endpoint = $1 AND ($2 = '' OR user_name = $2)`, endpoint, user)
		ok = tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("delete push subscription: %w", badText(err))
	}
	return ok, nil
}
