-- Action review: an action's review settings, as one JSON value (action,
-- args_schema, decisions, reject_requires_message; NULL for the other
-- types), and in an answer's result the JSON Patch of an edit (args_diff)
-- and the rule that decided it (rule_id).

ALTER TABLE interactions ADD COLUMN action TEXT;
ALTER TABLE interactions ADD COLUMN args_diff TEXT;
ALTER TABLE interactions ADD COLUMN rule_id TEXT NOT NULL DEFAULT '';

-- Rules decide actions without a person. They are revoked, never deleted.
-- interaction_id is the interaction whose answer made the rule ('' for one
-- made through the API); not a foreign key, so the rule outlives it.
-- Times are INTEGER unix milliseconds, UTC; match is JSON, NULL for every
-- call of the action.
CREATE TABLE rules (
    id             TEXT    NOT NULL PRIMARY KEY,
    effect         TEXT    NOT NULL CHECK (effect IN ('allow', 'deny')),
    source_agent   TEXT    NOT NULL,
    action_name    TEXT    NOT NULL,
    arg_match      TEXT,
    message        TEXT    NOT NULL DEFAULT '',
    created_by     TEXT    NOT NULL,
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER,
    revoked_at     INTEGER,
    revoked_by     TEXT    NOT NULL DEFAULT '',
    interaction_id TEXT    NOT NULL DEFAULT ''
) STRICT;

-- Every action's creation reads the rules in force for its agent (and
-- "*") and name, oldest first.
CREATE INDEX rules_scope ON rules (action_name, source_agent, created_at, id)
    WHERE revoked_at IS NULL;
-- Listing, oldest first.
CREATE INDEX rules_created ON rules (created_at, id);

-- A rule's events belong to no interaction: events.interaction_id may be
-- NULL. SQLite changes a column's constraints only by rebuilding the
-- table (as 0004 did); its sequence numbers are kept, and its index by
-- interaction (0006, for the purge) made again. The purge never deletes
-- such events (they belong to no interaction that ends).
CREATE TABLE events_new (
    seq            INTEGER PRIMARY KEY,
    type           TEXT    NOT NULL,
    interaction_id TEXT    REFERENCES interactions (id),
    at             INTEGER NOT NULL,
    actor          TEXT    NOT NULL DEFAULT '',
    channel        TEXT    NOT NULL DEFAULT '',
    detail         TEXT    NOT NULL DEFAULT ''
) STRICT;

INSERT INTO events_new (seq, type, interaction_id, at, actor, channel, detail)
    SELECT seq, type, interaction_id, at, actor, channel, detail FROM events;

DROP TABLE events;

ALTER TABLE events_new RENAME TO events;

CREATE INDEX events_interaction ON events (interaction_id);
