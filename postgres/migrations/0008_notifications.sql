-- Email and Web Push: the channels' stored settings, one notification row
-- per (interaction, channel, recipient, round), and people's Web Push
-- subscriptions.
--
-- Secrets in settings are stored sealed (AES-GCM) by their channel, never
-- in clear.

-- Each channel's settings as one JSON object (email: SMTP and link key;
-- push: VAPID keys).
CREATE TABLE channel_settings (
    channel    text        NOT NULL PRIMARY KEY,
    settings   text        NOT NULL,
    updated_at timestamptz NOT NULL
);

-- The durable notification: due_at is when the row has work to do (send,
-- retry, or a claim's lease ending); NULL when it has none. round numbers
-- repeated notifications of one recipient (0: the first). used_at is when
-- one of its links recorded an answer. Claims take rows FOR UPDATE SKIP
-- LOCKED and move them by compare-and-set, so each is worked on by one
-- replica at a time.
CREATE TABLE notifications (
    id             text        NOT NULL PRIMARY KEY,
    interaction_id text        NOT NULL REFERENCES interactions (id),
    channel        text        NOT NULL,
    recipient      text        NOT NULL,
    responder      text        NOT NULL DEFAULT '',
    round          integer     NOT NULL DEFAULT 0,
    state          text        NOT NULL
        CHECK (state IN ('scheduled', 'sending', 'sent', 'skipped', 'failed')),
    due_at         timestamptz,
    attempts       integer     NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL,
    used_at        timestamptz
);

CREATE UNIQUE INDEX notifications_key ON notifications (interaction_id, channel, recipient, round);
-- Work by channel and due time: the timer's next wake-up and the claims.
CREATE INDEX notifications_due ON notifications (channel, due_at) WHERE due_at IS NOT NULL;

-- Web Push subscriptions, by the push service's endpoint.
CREATE TABLE push_subscriptions (
    endpoint   text        NOT NULL PRIMARY KEY,
    user_name  text        NOT NULL,
    p256dh     text        NOT NULL,
    auth       text        NOT NULL,
    untargeted boolean     NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL
);

CREATE INDEX push_subscriptions_user ON push_subscriptions (user_name);
