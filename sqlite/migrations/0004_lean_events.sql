-- Every write appends an event, and every commit wrote two pages no query
-- reads: the sqlite_sequence row kept by AUTOINCREMENT, and the
-- events_interaction index (nothing looks events up by interaction, and no
-- interaction is ever deleted, so the foreign key does not need it).
-- Without them a question's commit writes 6 WAL frames instead of 8, an
-- answer's 4 instead of 6.
--
-- Without AUTOINCREMENT a new seq is max(seq) + 1. Events are never
-- deleted, so no number is used twice; whatever deletes events one day must
-- keep the newest.

DROP INDEX events_interaction;

CREATE TABLE events_lean (
    seq            INTEGER PRIMARY KEY,
    type           TEXT    NOT NULL,
    interaction_id TEXT    NOT NULL REFERENCES interactions (id),
    at             INTEGER NOT NULL,
    actor          TEXT    NOT NULL DEFAULT '',
    channel        TEXT    NOT NULL DEFAULT '',
    detail         TEXT    NOT NULL DEFAULT ''
) STRICT;

INSERT INTO events_lean (seq, type, interaction_id, at, actor, channel, detail)
    SELECT seq, type, interaction_id, at, actor, channel, detail FROM events;

DROP TABLE events;

ALTER TABLE events_lean RENAME TO events;
