-- Webhooks: an interaction's callback_url, admins' subscriptions, the
-- server's signing secret and how far the event log has been turned into
-- deliveries, and one row per delivery with its attempts.
--
-- Times are INTEGER unix milliseconds, UTC. Secrets are stored sealed
-- (AES-GCM), never in clear.

ALTER TABLE interactions ADD COLUMN callback_url TEXT NOT NULL DEFAULT '';

CREATE TABLE webhook_subscriptions (
    id          TEXT    NOT NULL PRIMARY KEY,
    url         TEXT    NOT NULL,
    events      TEXT    NOT NULL, -- JSON array of event names
    description TEXT    NOT NULL DEFAULT '',
    secret      TEXT    NOT NULL, -- sealed
    created_by  TEXT    NOT NULL,
    created_at  INTEGER NOT NULL
) STRICT;

-- One row (id 1). event_cursor starts at the end of the log as it is when
-- webhooks arrive, so that history is not sent.
CREATE TABLE webhook_state (
    id            INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    event_cursor  INTEGER NOT NULL,
    server_secret TEXT    NOT NULL DEFAULT '' -- sealed; '' until made
) STRICT;

INSERT INTO webhook_state (id, event_cursor) SELECT 1, coalesce(max(seq), 0) FROM events;

-- One row per POST of one event to one URL. subscription_id is '' for an
-- interaction's callback_url. due_at is when the row has work to do (the
-- next attempt, or a claim's lease ending); NULL once done.
CREATE TABLE webhook_deliveries (
    id              TEXT    NOT NULL PRIMARY KEY,
    subscription_id TEXT    NOT NULL DEFAULT '',
    interaction_id  TEXT    NOT NULL,
    event           TEXT    NOT NULL,
    event_seq       INTEGER NOT NULL,
    url             TEXT    NOT NULL,
    body            TEXT    NOT NULL,
    state           TEXT    NOT NULL CHECK (state IN ('pending', 'sending', 'delivered', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    due_at          INTEGER,
    created_at      INTEGER NOT NULL,
    delivered_at    INTEGER
) STRICT;

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX webhook_deliveries_interaction ON webhook_deliveries (interaction_id);
CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries (subscription_id, created_at);

CREATE TABLE webhook_attempts (
    delivery_id    TEXT    NOT NULL,
    interaction_id TEXT    NOT NULL, -- for the purge
    attempt        INTEGER NOT NULL,
    at             INTEGER NOT NULL,
    status_code    INTEGER NOT NULL DEFAULT 0,
    error          TEXT    NOT NULL DEFAULT '',
    duration_ms    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (delivery_id, attempt)
) STRICT;

CREATE INDEX webhook_attempts_interaction ON webhook_attempts (interaction_id);
