package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
)

var _ hitl.SlackStore = (*Store)(nil)

const (
	slackConfigCols  = `enabled, channel_id, delay_seconds, mention, unmapped_users, bot_token, app_token, signing_secret, updated_at`
	slackMessageCols = `interaction_id, state, due_at, attempts, channel_id, ts, created_at`
	slackActionCols  = `token, interaction_id, kind, option_key, created_at`
)

// sqlSlackWork lists the states whose rows have work at due_at.
const sqlSlackWork = `('scheduled', 'posting', 'ending', 'updating')`

// SlackConfig returns the stored Slack configuration, or ENOTFOUND.
func (s *Store) SlackConfig(ctx context.Context) (*hitl.SlackConfig, error) {
	var (
		c       hitl.SlackConfig
		updated int64
	)
	err := s.r.QueryRowContext(ctx, `SELECT `+slackConfigCols+` FROM slack_config WHERE id = 1`).Scan(
		&c.Enabled, &c.ChannelID, &c.DelaySeconds, &c.Mention, &c.UnmappedUsers,
		&c.BotToken, &c.AppToken, &c.SigningSecret, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "no Slack configuration saved")
	} else if err != nil {
		return nil, fmt.Errorf("read slack config: %w", err)
	}
	c.UpdatedAt = time.UnixMilli(updated).UTC()
	return &c, nil
}

// SaveSlackConfig replaces the stored Slack configuration. A zero
// UpdatedAt gets the store's clock.
func (s *Store) SaveSlackConfig(ctx context.Context, c *hitl.SlackConfig) error {
	updated := c.UpdatedAt
	if updated.IsZero() {
		updated = s.now()
	}
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO slack_config (id, `+slackConfigCols+`)
			VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET enabled = excluded.enabled, channel_id = excluded.channel_id,
				delay_seconds = excluded.delay_seconds, mention = excluded.mention,
				unmapped_users = excluded.unmapped_users, bot_token = excluded.bot_token,
				app_token = excluded.app_token, signing_secret = excluded.signing_secret,
				updated_at = excluded.updated_at`,
			c.Enabled, c.ChannelID, c.DelaySeconds, c.Mention, c.UnmappedUsers,
			c.BotToken, c.AppToken, c.SigningSecret, updated.UnixMilli())
		return err
	})
	if err != nil {
		return fmt.Errorf("save slack config: %w", err)
	}
	return nil
}

// ScheduleSlackMessages inserts the rows whose interaction has none yet and
// returns how many it inserted. A zero CreatedAt gets the store's clock.
func (s *Store) ScheduleSlackMessages(ctx context.Context, ms []*hitl.SlackMessage) (int, error) {
	if len(ms) == 0 {
		return 0, nil
	}
	now := s.now()
	var n int
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		n = 0
		for _, m := range ms {
			created := m.CreatedAt
			if created.IsZero() {
				created = now
			}
			res, err := tx.ExecContext(ctx, `INSERT INTO slack_messages (`+slackMessageCols+`)
				VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (interaction_id) DO NOTHING`,
				m.InteractionID, string(m.State), millis(m.DueAt), m.Attempts, m.ChannelID, m.TS, created.UnixMilli())
			if err != nil {
				return fmt.Errorf("interaction %s: %w", m.InteractionID, err)
			}
			k, err := res.RowsAffected()
			if err != nil {
				return err
			}
			n += int(k)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("schedule slack messages: %w", err)
	}
	return n, nil
}

// UnscheduledSlackInteractions returns up to limit pending interactions
// without a Slack row, oldest first.
func (s *Store) UnscheduledSlackInteractions(ctx context.Context, limit int) ([]*hitl.Interaction, error) {
	if limit <= 0 {
		limit = hitl.MaxListLimit
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+columns("i.")+` FROM interactions i
		WHERE i.status = 'pending'
			AND NOT EXISTS (SELECT 1 FROM slack_messages m WHERE m.interaction_id = i.id)
		ORDER BY i.created_at, i.id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("unscheduled slack interactions: %w", err)
	}
	list, err := scanInteractions(rows, 0)
	if err != nil {
		return nil, fmt.Errorf("unscheduled slack interactions: %w", err)
	}
	return list, nil
}

// NextSlackDue returns the earliest due time of a row with work to do.
func (s *Store) NextSlackDue(ctx context.Context) (time.Time, bool, error) {
	var ms sql.NullInt64
	st, err := s.reader(ctx, `SELECT min(due_at) FROM slack_messages WHERE state IN `+sqlSlackWork)
	if err == nil {
		err = st.QueryRowContext(ctx).Scan(&ms)
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next slack due: %w", err)
	}
	return fromMillis(ms), ms.Valid, nil
}

// slackLease is how Slack rows are claimed: one to post moves to
// posting, one to update to updating.
var slackLease = leased{
	table: "slack_messages", key: "interaction_id",
	work:      `state IN ` + sqlSlackWork,
	claim:     `state = CASE WHEN state IN ('scheduled', 'posting') THEN 'posting' ELSE 'updating' END`,
	returning: slackMessageCols,
}

// ClaimSlackMessages claims up to limit rows due at now, in one write
// transaction: the single writer makes the UPDATE a compare-and-set that
// no other claim can interleave with.
func (s *Store) ClaimSlackMessages(ctx context.Context, now, leaseUntil time.Time, limit int) ([]*hitl.SlackMessage, error) {
	out, err := claimWithInteractions(ctx, s, slackLease, now, leaseUntil, limit, nil, scanSlackMessage,
		func(m *hitl.SlackMessage) (string, **hitl.Interaction) { return m.InteractionID, &m.Interaction })
	if err != nil {
		return nil, fmt.Errorf("claim slack messages: %w", err)
	}
	return out, nil
}

// UpdateSlackMessage writes m if its row is still in state from with the
// given attempts, and reports whether it was.
func (s *Store) UpdateSlackMessage(ctx context.Context, m *hitl.SlackMessage, from hitl.SlackState, attempts int) (bool, error) {
	var ok bool
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE slack_messages
			SET state = ?, due_at = ?, attempts = ?, channel_id = ?, ts = ?
			WHERE interaction_id = ? AND state = ? AND attempts = ?`,
			string(m.State), millis(m.DueAt), m.Attempts, m.ChannelID, m.TS,
			m.InteractionID, string(from), attempts)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		ok = n == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("update slack message %s: %w", m.InteractionID, err)
	}
	return ok, nil
}

// EndSlackMessages moves the rows of interactions that are no longer
// pending (only id's, unless id is ""): scheduled ones to skipped, posted
// ones to ending, due at now. It returns how many became ending.
func (s *Store) EndSlackMessages(ctx context.Context, id string, now time.Time) (int, error) {
	cond := `EXISTS (SELECT 1 FROM interactions i WHERE i.id = slack_messages.interaction_id AND i.status <> 'pending')`
	var args []any
	if id != "" {
		cond = `interaction_id = ? AND ` + cond
		args = []any{id}
	}
	var n int
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE slack_messages SET state = 'skipped', due_at = NULL
			WHERE state = 'scheduled' AND `+cond, args...); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE slack_messages SET state = 'ending', due_at = ?, attempts = 0
			WHERE state = 'posted' AND `+cond, append([]any{now.UnixMilli()}, args...)...)
		if err != nil {
			return err
		}
		k, err := res.RowsAffected()
		n = int(k)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("end slack messages: %w", err)
	}
	return n, nil
}

// SlackMessage returns the row of an interaction, or ENOTFOUND.
func (s *Store) SlackMessage(ctx context.Context, interactionID string) (*hitl.SlackMessage, error) {
	return s.slackMessageWhere(ctx, `m.interaction_id = ?`, interactionID)
}

// SlackMessageByThread returns the row of the message posted to channel
// at ts, or ENOTFOUND.
func (s *Store) SlackMessageByThread(ctx context.Context, channel, ts string) (*hitl.SlackMessage, error) {
	if ts == "" {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "no Slack message")
	}
	return s.slackMessageWhere(ctx, `m.channel_id = ? AND m.ts = ? AND m.ts <> ''`, channel, ts)
}

func (s *Store) slackMessageWhere(ctx context.Context, where string, args ...any) (*hitl.SlackMessage, error) {
	row := s.r.QueryRowContext(ctx, `SELECT m.interaction_id, m.state, m.due_at, m.attempts, m.channel_id, m.ts, m.created_at, `+columns("i.")+`
		FROM slack_messages m JOIN interactions i ON i.id = m.interaction_id WHERE `+where, args...)
	var m hitl.SlackMessage
	var due sql.NullInt64
	var created int64
	in, err := scanInteraction(row, &m.InteractionID, &m.State, &due, &m.Attempts, &m.ChannelID, &m.TS, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "no Slack message")
	} else if err != nil {
		return nil, fmt.Errorf("read slack message: %w", err)
	}
	m.DueAt = fromMillis(due)
	m.CreatedAt = time.UnixMilli(created).UTC()
	m.Interaction = in
	return &m, nil
}

// scanSlackMessage reads slackMessageCols.
func scanSlackMessage(sc scanner) (*hitl.SlackMessage, error) {
	var m hitl.SlackMessage
	var due sql.NullInt64
	var created int64
	if err := sc.Scan(&m.InteractionID, &m.State, &due, &m.Attempts, &m.ChannelID, &m.TS, &created); err != nil {
		return nil, err
	}
	m.DueAt = fromMillis(due)
	m.CreatedAt = time.UnixMilli(created).UTC()
	return &m, nil
}

// AddSlackActions stores action tokens. A zero CreatedAt gets the store's
// clock.
func (s *Store) AddSlackActions(ctx context.Context, as []*hitl.SlackAction) error {
	if len(as) == 0 {
		return nil
	}
	now := s.now()
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, a := range as {
			created := a.CreatedAt
			if created.IsZero() {
				created = now
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO slack_actions (`+slackActionCols+`) VALUES (?, ?, ?, ?, ?)`,
				a.Token, a.InteractionID, a.Kind, a.OptionKey, created.UnixMilli()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("add slack actions: %w", err)
	}
	return nil
}

// SlackAction returns the action with the token, or ENOTFOUND.
func (s *Store) SlackAction(ctx context.Context, token string) (*hitl.SlackAction, error) {
	var a hitl.SlackAction
	var created int64
	err := s.r.QueryRowContext(ctx, `SELECT `+slackActionCols+` FROM slack_actions WHERE token = ?`, token).Scan(
		&a.Token, &a.InteractionID, &a.Kind, &a.OptionKey, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "unknown Slack action")
	} else if err != nil {
		return nil, fmt.Errorf("read slack action: %w", err)
	}
	a.CreatedAt = time.UnixMilli(created).UTC()
	return &a, nil
}

// SeenSlackEvent records id at now and reports whether it is new; IDs seen
// before forgetBefore are forgotten first.
func (s *Store) SeenSlackEvent(ctx context.Context, id string, now, forgetBefore time.Time) (bool, error) {
	var fresh bool
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM slack_events WHERE seen_at < ?`, forgetBefore.UnixMilli()); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO slack_events (id, seen_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING`,
			id, now.UnixMilli())
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		fresh = n == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("record slack event: %w", err)
	}
	return fresh, nil
}
