-- Webhooks: an interaction's callback_url, admins' subscriptions, the
-- server's signing secret and how far the event log has been turned into
-- deliveries, and one row per delivery with its attempts.
--
-- Secrets are stored sealed (AES-GCM), never in clear.

ALTER TABLE interactions ADD COLUMN callback_url text NOT NULL DEFAULT '';

CREATE TABLE webhook_subscriptions (
    id          text        NOT NULL PRIMARY KEY,
    url         text        NOT NULL,
    events      text        NOT NULL, -- JSON array of event names
    description text        NOT NULL DEFAULT '',
    secret      text        NOT NULL, -- sealed
    created_by  text        NOT NULL,
    created_at  timestamptz NOT NULL
);

-- One row (id 1). event_cursor starts at the end of the log as it is when
-- webhooks arrive, so that history is not sent. Enqueueing moves it by
-- compare-and-set, so one replica turns each event into deliveries.
CREATE TABLE webhook_state (
    id            integer NOT NULL PRIMARY KEY CHECK (id = 1),
    event_cursor  bigint  NOT NULL,
    server_secret text    NOT NULL DEFAULT '' -- sealed; '' until made
);

INSERT INTO webhook_state (id, event_cursor) SELECT 1, coalesce(max(seq), 0) FROM events;

-- One row per POST of one event to one URL. subscription_id is '' for an
-- interaction's callback_url. due_at is when the row has work to do (the
-- next attempt, or a claim's lease ending); NULL once done. Claims take
-- rows FOR UPDATE SKIP LOCKED.
CREATE TABLE webhook_deliveries (
    id              text        NOT NULL PRIMARY KEY,
    subscription_id text        NOT NULL DEFAULT '',
    interaction_id  text        NOT NULL,
    event           text        NOT NULL,
    event_seq       bigint      NOT NULL,
    url             text        NOT NULL,
    body            text        NOT NULL,
    state           text        NOT NULL CHECK (state IN ('pending', 'sending', 'delivered', 'failed')),
    attempts        integer     NOT NULL DEFAULT 0,
    due_at          timestamptz,
    created_at      timestamptz NOT NULL,
    delivered_at    timestamptz
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX webhook_deliveries_interaction ON webhook_deliveries (interaction_id);
CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries (subscription_id, created_at);

CREATE TABLE webhook_attempts (
    delivery_id    text        NOT NULL,
    interaction_id text        NOT NULL, -- for the purge
    attempt        integer     NOT NULL,
    at             timestamptz NOT NULL,
    status_code    integer     NOT NULL DEFAULT 0,
    error          text        NOT NULL DEFAULT '',
    duration_ms    bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (delivery_id, attempt)
);

CREATE INDEX webhook_attempts_interaction ON webhook_attempts (interaction_id);
