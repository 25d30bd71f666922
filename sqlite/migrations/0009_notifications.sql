-- Email and Web Push: the channels' stored settings, one notification row
-- per (interaction, channel, recipient, round), and people's Web Push
-- subscriptions.
--
-- Times are INTEGER unix milliseconds, UTC. Secrets in settings are stored
-- sealed (AES-GCM) by their channel, never in clear.

-- Each channel's settings as one JSON object (email: SMTP and link key;
-- push: VAPID keys).
CREATE TABLE channel_settings (
    channel    TEXT    NOT NULL PRIMARY KEY,
    settings   TEXT    NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

-- The durable notification: due_at is when the row has work to do (send,
-- retry, or a claim's lease ending); NULL when it has none. round numbers
-- repeated notifications of one recipient (0: the first). used_at is when
-- one of its links recorded an answer.
CREATE TABLE notifications (
    id             TEXT    NOT NULL PRIMARY KEY,
    interaction_id TEXT    NOT NULL REFERENCES interactions (id),
    channel        TEXT    NOT NULL,
    recipient      TEXT    NOT NULL,
    responder      TEXT    NOT NULL DEFAULT '',
    round          INTEGER NOT NULL DEFAULT 0,
    state          TEXT    NOT NULL
        CHECK (state IN ('scheduled', 'sending', 'sent', 'skipped', 'failed')),
    due_at         INTEGER,
    attempts       INTEGER NOT NULL DEFAULT 0,
    created_at     INTEGER NOT NULL,
    used_at        INTEGER
) STRICT;

CREATE UNIQUE INDEX notifications_key ON notifications (interaction_id, channel, recipient, round);
-- Work by channel and due time: the timer's next wake-up and the claims.
CREATE INDEX notifications_due ON notifications (channel, due_at) WHERE due_at IS NOT NULL;

-- Web Push subscriptions, by the push service's endpoint.
CREATE TABLE push_subscriptions (
    endpoint   TEXT    NOT NULL PRIMARY KEY,
    user_name  TEXT    NOT NULL,
    p256dh     TEXT    NOT NULL,
    auth       TEXT    NOT NULL,
    untargeted INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
) STRICT;

CREATE INDEX push_subscriptions_user ON push_subscriptions (user_name);
