-- Interactions and the append-only event log.
--
-- Times are INTEGER unix milliseconds, UTC; a NULL deadline means none.
-- JSON values are TEXT; NULL means the Go field was nil.

CREATE TABLE interactions (
    id               TEXT    NOT NULL PRIMARY KEY,
    type             TEXT    NOT NULL,
    question         TEXT    NOT NULL,
    context          TEXT    NOT NULL DEFAULT '',
    options          TEXT,
    form_schema      TEXT,
    default_response TEXT,
    timeout          REAL    NOT NULL DEFAULT 0,
    deadline         INTEGER,
    on_timeout       TEXT    NOT NULL DEFAULT '',
    idempotency_key  TEXT    NOT NULL DEFAULT '',
    source_agent     TEXT    NOT NULL DEFAULT '',
    session_id       TEXT    NOT NULL DEFAULT '',
    metadata         TEXT,
    targets          TEXT,
    created_by       TEXT    NOT NULL DEFAULT '',
    created_via      TEXT    NOT NULL DEFAULT '',
    created_at       INTEGER NOT NULL,
    request_hash     TEXT    NOT NULL DEFAULT '',
    status           TEXT    NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'answered', 'expired', 'cancelled')),
    -- The result, set once when the status leaves pending.
    result_value     TEXT,
    responded_by     TEXT    NOT NULL DEFAULT '',
    result_channel   TEXT    NOT NULL DEFAULT '',
    responded_at     INTEGER,
    timed_out        INTEGER NOT NULL DEFAULT 0,
    reason           TEXT    NOT NULL DEFAULT ''
) STRICT;

-- One interaction per agent and idempotency key.
CREATE UNIQUE INDEX interactions_idempotency
    ON interactions (created_by, idempotency_key)
    WHERE idempotency_key <> '';

-- Pending deadlines, earliest first: NextDeadline and DueInteractions.
-- (Not a partial index WHERE status = 'pending': without ANALYZE statistics
-- the planner prefers interactions_status_created over it and sorts.)
CREATE INDEX interactions_status_deadline ON interactions (status, deadline, id);

-- Listing newest first, with and without a status filter.
CREATE INDEX interactions_created ON interactions (created_at DESC, id DESC);
CREATE INDEX interactions_status_created ON interactions (status, created_at DESC, id DESC);

CREATE TABLE events (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    type           TEXT    NOT NULL,
    interaction_id TEXT    NOT NULL REFERENCES interactions (id),
    at             INTEGER NOT NULL,
    actor          TEXT    NOT NULL DEFAULT '',
    channel        TEXT    NOT NULL DEFAULT '',
    detail         TEXT    NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX events_interaction ON events (interaction_id, seq);
