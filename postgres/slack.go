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

var _ hitl.SlackStore = (*Store)(nil)

const (
	slackConfigCols  = `enabled, channel_id, delay_seconds, mention, unmapped_users, bot_token, app_token, signing_secret, updated_at`
	slackMessageCols = `interaction_id, state, due_at, attempts, channel_id, ts, created_at`
	slackActionCols  = `token, interaction_id, kind, option_key, created_at`
)

// sqlSlackWork lists the states whose rows have work at due_at.
const sqlSlackWork = `('scheduled', 'posting', 'ending', 'updating')`

// slackLease is how Slack rows are claimed: one to post moves to
// posting, one to update to updating.
var slackLease = leased{
	table: "slack_messages", key: "interaction_id",
	work:      `state IN ` + sqlSlackWork,
	claim:     `state = CASE WHEN r.state IN ('scheduled', 'posting') THEN 'posting' ELSE 'updating' END`,
	returning: []string{prefixed("r.", strings.Split(slackMessageCols, ", "))},
}

// SlackConfig returns the stored Slack configuration, or ENOTFOUND.
func (s *Store) SlackConfig(ctx context.Context) (*hitl.SlackConfig, error) {
	var c hitl.SlackConfig
	err := s.queryRow(ctx, `SELECT `+slackConfigCols+` FROM slack_config WHERE id = 1`, nil,
		&c.Enabled, &c.ChannelID, &c.DelaySeconds, &c.Mention, &c.UnmappedUsers,
		&c.BotToken, &c.AppToken, &c.SigningSecret, &c.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "no Slack configuration saved")
	} else if err != nil {
		return nil, fmt.Errorf("read slack config: %w", err)
	}
	c.UpdatedAt = c.UpdatedAt.UTC()
	return &c, nil
}

// SaveSlackConfig replaces the stored Slack configuration. A zero
// UpdatedAt gets the store's clock.
func (s *Store) SaveSlackConfig(ctx context.Context, c *hitl.SlackConfig) error {
	err := s.exec(ctx, `INSERT INTO slack_config (id, `+slackConfigCols+`)
		VALUES (1, $1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (id) DO UPDATE SET enabled = excluded.enabled, channel_id = excluded.channel_id,
			delay_seconds = excluded.delay_seconds, mention = excluded.mention,
			unmapped_users = excluded.unmapped_users, bot_token = excluded.bot_token,
			app_token = excluded.app_token, signing_secret = excluded.signing_secret,
			updated_at = excluded.updated_at`,
		c.Enabled, c.ChannelID, c.DelaySeconds, c.Mention, c.UnmappedUsers,
		c.BotToken, c.AppToken, c.SigningSecret, s.stamp(c.UpdatedAt))
	if err != nil {
		return fmt.Errorf("save slack config: %w", badText(err))
	}
	return nil
}

// ScheduleSlackMessages inserts the rows whose interaction has none yet and
// returns how many it inserted. A zero CreatedAt gets the store's clock.
func (s *Store) ScheduleSlackMessages(ctx context.Context, ms []*hitl.SlackMessage) (int, error) {
	if len(ms) == 0 {
		return 0, nil
	}
	now := s.stamp(time.Time{})
	n := 0
	err := s.with(ctx, func(c *pgx.Conn) error {
		b := &pgx.Batch{}
		for _, m := range ms {
			created := now
			if !m.CreatedAt.IsZero() {
				created = truncate(m.CreatedAt)
			}
			b.Queue(`INSERT INTO slack_messages (`+slackMessageCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7)
				ON CONFLICT (interaction_id) DO NOTHING`,
				m.InteractionID, string(m.State), timestamp(truncate(m.DueAt)), m.Attempts, m.ChannelID, m.TS, created)
		}
		res := c.SendBatch(ctx, b)
		for range ms {
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
		return 0, fmt.Errorf("schedule slack messages: %w", badText(err))
	}
	return n, nil
}

// UnscheduledSlackInteractions returns up to limit pending interactions
// without a Slack row, oldest first.
func (s *Store) UnscheduledSlackInteractions(ctx context.Context, limit int) ([]*hitl.Interaction, error) {
	if limit <= 0 {
		limit = hitl.MaxListLimit
	}
	var list []*hitl.Interaction
	err := s.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, `SELECT `+columns("i.")+` FROM interactions i
			WHERE i.status = 'pending'
				AND NOT EXISTS (SELECT 1 FROM slack_messages m WHERE m.interaction_id = i.id)
			ORDER BY i.created_at, i.id LIMIT $1`, limit)
		if err != nil {
			return err
		}
		list, err = scanInteractions(rows, 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("unscheduled slack interactions: %w", err)
	}
	return list, nil
}

// NextSlackDue returns the earliest due time of a row with work to do.
func (s *Store) NextSlackDue(ctx context.Context) (time.Time, bool, error) {
	var due *time.Time
	if err := s.queryRow(ctx, `SELECT min(due_at) FROM slack_messages WHERE state IN `+sqlSlackWork, nil, &due); err != nil {
		return time.Time{}, false, fmt.Errorf("next slack due: %w", err)
	}
	return utc(due), due != nil, nil
}

// ClaimSlackMessages claims up to limit rows due at now. Rows another
// replica is claiming at the same moment are skipped, not waited for, and
// a claimed row's lease keeps it from being claimed again until
// leaseUntil.
func (s *Store) ClaimSlackMessages(ctx context.Context, now, leaseUntil time.Time, limit int) ([]*hitl.SlackMessage, error) {
	out, err := claimRows(ctx, s, slackLease, true, now, leaseUntil, limit, nil, func(rows pgx.Rows) (*hitl.SlackMessage, error) {
		var (
			m     hitl.SlackMessage
			state string
			due   *time.Time
		)
		in, err := scanInteraction(rows, &m.InteractionID, &state, &due, &m.Attempts, &m.ChannelID, &m.TS, &m.CreatedAt)
		if err != nil {
			return nil, err
		}
		m.State, m.DueAt, m.CreatedAt, m.Interaction = hitl.SlackState(state), utc(due), m.CreatedAt.UTC(), in
		return &m, nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim slack messages: %w", err)
	}
	return out, nil
}

// UpdateSlackMessage writes m if its row is still in state from with the
// given attempts, and reports whether it was.
func (s *Store) UpdateSlackMessage(ctx context.Context, m *hitl.SlackMessage, from hitl.SlackState, attempts int) (bool, error) {
	var ok bool
	err := s.with(ctx, func(c *pgx.Conn) error {
		tag, err := c.Exec(ctx, `UPDATE slack_messages
			SET state = $1, due_at = $2, attempts = $3, channel_id = $4, ts = $5
			WHERE interaction_id = $6 AND state = $7 AND attempts = $8`,
			string(m.State), timestamp(truncate(m.DueAt)), m.Attempts, m.ChannelID, m.TS,
			m.InteractionID, string(from), attempts)
		ok = tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("update slack message %s: %w", m.InteractionID, badText(err))
	}
	return ok, nil
}

// EndSlackMessages moves the rows of interactions that are no longer
// pending (only id's, unless id is ""): scheduled ones to skipped, posted
// ones to ending, due at now. It returns how many became ending.
func (s *Store) EndSlackMessages(ctx context.Context, id string, now time.Time) (int, error) {
	cond := `EXISTS (SELECT 1 FROM interactions i WHERE i.id = m.interaction_id AND i.status <> 'pending')`
	args := []any{truncate(now)}
	if id != "" {
		cond = `m.interaction_id = $2 AND ` + cond
		args = append(args, id)
	}
	// Two data-modifying CTEs on disjoint rows (by state), one statement;
	// PostgreSQL runs both whether or not the query reads them.
	var n int
	err := s.queryRow(ctx, `WITH skipped AS (
			UPDATE slack_messages m SET state = 'skipped', due_at = NULL
			WHERE m.state = 'scheduled' AND `+cond+`
			RETURNING 1
		), ending AS (
			UPDATE slack_messages m SET state = 'ending', due_at = $1, attempts = 0
			WHERE m.state = 'posted' AND `+cond+`
			RETURNING 1
		)
		SELECT count(*) FROM ending`, args, &n)
	if err != nil {
		return 0, fmt.Errorf("end slack messages: %w", err)
	}
	return n, nil
}

// SlackMessage returns the row of an interaction, or ENOTFOUND.
func (s *Store) SlackMessage(ctx context.Context, interactionID string) (*hitl.SlackMessage, error) {
	return s.slackMessageWhere(ctx, `m.interaction_id = $1`, interactionID)
}

// SlackMessageByThread returns the row of the message posted to channel
// at ts, or ENOTFOUND.
func (s *Store) SlackMessageByThread(ctx context.Context, channel, ts string) (*hitl.SlackMessage, error) {
	if ts == "" {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "no Slack message")
	}
	return s.slackMessageWhere(ctx, `m.channel_id = $1 AND m.ts = $2 AND m.ts <> ''`, channel, ts)
}

func (s *Store) slackMessageWhere(ctx context.Context, where string, args ...any) (*hitl.SlackMessage, error) {
	var (
		m     hitl.SlackMessage
		state string
		due   *time.Time
	)
	err := s.with(ctx, func(c *pgx.Conn) error {
		var err error
		m.Interaction, err = scanInteraction(c.QueryRow(ctx, `SELECT m.interaction_id, m.state, m.due_at, m.attempts, m.channel_id, m.ts, m.created_at, `+columns("i.")+`
			FROM slack_messages m JOIN interactions i ON i.id = m.interaction_id WHERE `+where, args...),
			&m.InteractionID, &state, &due, &m.Attempts, &m.ChannelID, &m.TS, &m.CreatedAt)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "no Slack message")
	} else if err != nil {
		return nil, fmt.Errorf("read slack message: %w", badText(err))
	}
	m.State, m.DueAt, m.CreatedAt = hitl.SlackState(state), utc(due), m.CreatedAt.UTC()
	return &m, nil
}

// AddSlackActions stores action tokens. A zero CreatedAt gets the store's
// clock.
func (s *Store) AddSlackActions(ctx context.Context, as []*hitl.SlackAction) error {
	if len(as) == 0 {
		return nil
	}
	err := s.with(ctx, func(c *pgx.Conn) error {
		rows := make([][]any, len(as))
		for i, a := range as {
			rows[i] = []any{a.Token, a.InteractionID, a.Kind, a.OptionKey, s.stamp(a.CreatedAt)}
		}
		b := &pgx.Batch{}
		for _, r := range rows {
			b.Queue(`INSERT INTO slack_actions (`+slackActionCols+`) VALUES ($1, $2, $3, $4, $5)`, r...)
		}
		return c.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("add slack actions: %w", badText(err))
	}
	return nil
}

// SlackAction returns the action with the token, or ENOTFOUND.
func (s *Store) SlackAction(ctx context.Context, token string) (*hitl.SlackAction, error) {
	var a hitl.SlackAction
	err := s.queryRow(ctx, `SELECT `+slackActionCols+` FROM slack_actions WHERE token = $1`, []any{token},
		&a.Token, &a.InteractionID, &a.Kind, &a.OptionKey, &a.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "unknown Slack action")
	} else if err != nil {
		return nil, fmt.Errorf("read slack action: %w", badText(err))
	}
	a.CreatedAt = a.CreatedAt.UTC()
	return &a, nil
}

// SeenSlackEvent records id at now and reports whether it is new; IDs seen
// before forgetBefore are forgotten.
func (s *Store) SeenSlackEvent(ctx context.Context, id string, now, forgetBefore time.Time) (bool, error) {
	var fresh bool
	err := s.with(ctx, func(c *pgx.Conn) error {
		if _, err := c.Exec(ctx, `DELETE FROM slack_events WHERE seen_at < $1`, truncate(forgetBefore)); err != nil {
			return err
		}
		tag, err := c.Exec(ctx, `INSERT INTO slack_events (id, seen_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`,
			id, truncate(now))
		fresh = tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("record slack event: %w", badText(err))
	}
	return fresh, nil
}
