-- Slack: an interaction's own notification settings, the channel's
-- configuration, one message row per interaction, the action tokens of
-- posted messages, and the Slack event IDs already handled.
--
-- Times are INTEGER unix milliseconds, UTC. Secrets are stored sealed
-- (AES-GCM) by the slack package, never in clear.

-- The agent's notify settings (JSON), NULL for the server's.
ALTER TABLE interactions ADD COLUMN notify TEXT;

-- One row (id 1): the configuration saved through the API.
CREATE TABLE slack_config (
    id             INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    enabled        INTEGER NOT NULL DEFAULT 0,
    channel_id     TEXT    NOT NULL DEFAULT '',
    delay_seconds  INTEGER NOT NULL DEFAULT 120,
    mention        TEXT    NOT NULL DEFAULT 'none',
    unmapped_users TEXT    NOT NULL DEFAULT 'untargeted',
    bot_token      TEXT    NOT NULL DEFAULT '',
    app_token      TEXT    NOT NULL DEFAULT '',
    signing_secret TEXT    NOT NULL DEFAULT '',
    updated_at     INTEGER NOT NULL
) STRICT;

-- The durable notification: due_at is when the row has work to do (post,
-- retry, update, or a claim's lease ending); NULL when it has none.
CREATE TABLE slack_messages (
    interaction_id TEXT    NOT NULL PRIMARY KEY REFERENCES interactions (id),
    state          TEXT    NOT NULL
        CHECK (state IN ('scheduled', 'posting', 'skipped', 'posted', 'ending', 'updating', 'closed', 'failed')),
    due_at         INTEGER,
    attempts       INTEGER NOT NULL DEFAULT 0,
    channel_id     TEXT    NOT NULL DEFAULT '',
    ts             TEXT    NOT NULL DEFAULT '',
    created_at     INTEGER NOT NULL
) STRICT;

-- Work by due time: the timer's next wake-up and the claims.
CREATE INDEX slack_messages_due ON slack_messages (due_at);
-- Rows waiting on their interaction's end (start-up sweep).
CREATE INDEX slack_messages_state ON slack_messages (state);
-- Thread replies find their interaction by (channel, thread_ts).
CREATE UNIQUE INDEX slack_messages_thread ON slack_messages (channel_id, ts) WHERE ts <> '';

-- Opaque tokens carried by buttons and options (action_id, value).
CREATE TABLE slack_actions (
    token          TEXT    NOT NULL PRIMARY KEY,
    interaction_id TEXT    NOT NULL REFERENCES interactions (id),
    kind           TEXT    NOT NULL,
    option_key     TEXT    NOT NULL DEFAULT '',
    created_at     INTEGER NOT NULL
) STRICT;

CREATE INDEX slack_actions_interaction ON slack_actions (interaction_id);

-- Slack event IDs handled recently, so Slack's retries act once.
CREATE TABLE slack_events (
    id      TEXT    NOT NULL PRIMARY KEY,
    seen_at INTEGER NOT NULL
) STRICT;

CREATE INDEX slack_events_seen ON slack_events (seen_at);
