-- Action review: an action's review settings, as one JSON text (action,
-- args_schema, decisions, reject_requires_message; NULL for the other
-- types), and in an answer's result the JSON Patch of an edit (args_diff)
-- and the rule that decided it (rule_id).
ALTER TABLE interactions
    ADD COLUMN action    text,
    ADD COLUMN args_diff text,
    ADD COLUMN rule_id   text NOT NULL DEFAULT '';

-- Rules decide actions without a person. They are revoked, never deleted.
-- interaction_id is the interaction whose answer made the rule ('' for one
-- made through the API); not a foreign key, so the rule outlives it.
-- arg_match is JSON text, NULL for every call of the action.
CREATE TABLE rules (
    id             text        NOT NULL PRIMARY KEY,
    effect         text        NOT NULL CHECK (effect IN ('allow', 'deny')),
    source_agent   text        NOT NULL,
    action_name    text        NOT NULL,
    arg_match      text,
    message        text        NOT NULL DEFAULT '',
    created_by     text        NOT NULL,
    created_at     timestamptz NOT NULL,
    expires_at     timestamptz,
    revoked_at     timestamptz,
    revoked_by     text        NOT NULL DEFAULT '',
    interaction_id text        NOT NULL DEFAULT ''
);

-- Every action's creation reads the rules in force for its agent (and
-- '*') and name, oldest first.
CREATE INDEX rules_scope ON rules (action_name, source_agent, created_at, id)
    WHERE revoked_at IS NULL;
-- Listing, oldest first.
CREATE INDEX rules_created ON rules (created_at, id);

-- A rule's events belong to no interaction.
ALTER TABLE events ALTER COLUMN interaction_id DROP NOT NULL;
