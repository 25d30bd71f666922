-- Slack: an interaction's own notification settings, the channel's
-- configuration, one message row per interaction, the action tokens of
-- posted messages, and the Slack event IDs already handled.
--
-- Secrets are stored sealed (AES-GCM) by the slack package, never in
-- clear.

-- The agent's notify settings (JSON text), NULL for the server's.
ALTER TABLE interactions ADD COLUMN notify text;

-- One row (id 1): the configuration saved through the API.
CREATE TABLE slack_config (
    id             integer     NOT NULL PRIMARY KEY CHECK (id = 1),
    enabled        boolean     NOT NULL DEFAULT false,
    channel_id     text        NOT NULL DEFAULT '',
    delay_seconds  integer     NOT NULL DEFAULT 120,
    mention        text        NOT NULL DEFAULT 'none',
    unmapped_users text        NOT NULL DEFAULT 'untargeted',
    bot_token      text        NOT NULL DEFAULT '',
    app_token      text        NOT NULL DEFAULT '',
    signing_secret text        NOT NULL DEFAULT '',
    updated_at     timestamptz NOT NULL
);

-- The durable notification: due_at is when the row has work to do (post,
-- retry, update, or a claim's lease ending); NULL when it has none.
-- Claims take rows FOR UPDATE SKIP LOCKED and move them by
-- compare-and-set, so each is worked on by one replica at a time.
CREATE TABLE slack_messages (
    interaction_id text        NOT NULL PRIMARY KEY REFERENCES interactions (id),
    state          text        NOT NULL
        CHECK (state IN ('scheduled', 'posting', 'skipped', 'posted', 'ending', 'updating', 'closed', 'failed')),
    due_at         timestamptz,
    attempts       integer     NOT NULL DEFAULT 0,
    channel_id     text        NOT NULL DEFAULT '',
    ts             text        NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL
);

-- Work by due time: the timer's next wake-up and the claims.
CREATE INDEX slack_messages_due ON slack_messages (due_at) WHERE due_at IS NOT NULL;
-- Rows waiting on their interaction's end (start-up sweep).
CREATE INDEX slack_messages_waiting ON slack_messages (state) WHERE state IN ('scheduled', 'posted');
-- Thread replies find their interaction by (channel, thread_ts).
CREATE UNIQUE INDEX slack_messages_thread ON slack_messages (channel_id, ts) WHERE ts <> '';

-- Opaque tokens carried by buttons and options (action_id, value).
CREATE TABLE slack_actions (
    token          text        NOT NULL PRIMARY KEY,
    interaction_id text        NOT NULL REFERENCES interactions (id),
    kind           text        NOT NULL,
    option_key     text        NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL
);

CREATE INDEX slack_actions_interaction ON slack_actions (interaction_id);

-- Slack event IDs handled recently, so Slack's retries act once.
CREATE TABLE slack_events (
    id      text        NOT NULL PRIMARY KEY,
    seen_at timestamptz NOT NULL
);

CREATE INDEX slack_events_seen ON slack_events (seen_at);
