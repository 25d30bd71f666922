-- Interactions and the append-only event log.
--
-- Times are timestamptz, kept to the millisecond by the store; a NULL
-- deadline means none. JSON values are text, exactly as the store wrote
-- them (jsonb would reorder keys); NULL means the Go field was nil.

CREATE TABLE interactions (
    id               text             NOT NULL PRIMARY KEY,
    type             text             NOT NULL,
    question         text             NOT NULL,
    context          text             NOT NULL DEFAULT '',
    options          text,
    form_schema      text,
    default_response text,
    timeout          double precision NOT NULL DEFAULT 0,
    deadline         timestamptz,
    on_timeout       text             NOT NULL DEFAULT '',
    idempotency_key  text             NOT NULL DEFAULT '',
    source_agent     text             NOT NULL DEFAULT '',
    session_id       text             NOT NULL DEFAULT '',
    metadata         text,
    targets          text,
    created_by       text             NOT NULL DEFAULT '',
    created_via      text             NOT NULL DEFAULT '',
    created_at       timestamptz      NOT NULL,
    request_hash     text             NOT NULL DEFAULT '',
    status           text             NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'answered', 'expired', 'cancelled')),
    -- The result, set once when the status leaves pending.
    result_value     text,
    responded_by     text             NOT NULL DEFAULT '',
    result_channel   text             NOT NULL DEFAULT '',
    responded_at     timestamptz,
    timed_out        boolean          NOT NULL DEFAULT false,
    reason           text             NOT NULL DEFAULT ''
);

-- One interaction per agent and idempotency key (the arbiter of
-- CreateInteraction's ON CONFLICT).
CREATE UNIQUE INDEX interactions_idempotency
    ON interactions (created_by, idempotency_key)
    WHERE idempotency_key <> '';

-- Pending deadlines, earliest first: NextDeadline and DueInteractions.
CREATE INDEX interactions_pending_deadline
    ON interactions (deadline, id)
    WHERE status = 'pending';

-- Listing newest first, with and without a status filter; counting.
CREATE INDEX interactions_created ON interactions (created_at DESC, id DESC);
CREATE INDEX interactions_status_created ON interactions (status, created_at DESC, id DESC);

-- seq comes from a sequence with no cache, so numbers are handed out in
-- order across connections; transactions may still commit out of order
-- and rolled-back ones leave gaps, which the event listener accounts for.
CREATE TABLE events (
    seq            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    type           text        NOT NULL,
    interaction_id text        NOT NULL REFERENCES interactions (id),
    at             timestamptz NOT NULL,
    actor          text        NOT NULL DEFAULT '',
    channel        text        NOT NULL DEFAULT '',
    detail         text        NOT NULL DEFAULT ''
);

CREATE INDEX events_interaction ON events (interaction_id, seq);
