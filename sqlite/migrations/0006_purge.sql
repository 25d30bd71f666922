-- Interactions that ended long ago are purged (hitl serve --retention,
-- hitl purge), with their events. Deleting an interaction makes SQLite
-- look for events that still refer to it (the foreign key), and the purge
-- deletes an interaction's events by interaction: without an index on
-- events.interaction_id both would read the whole log, for every
-- interaction purged. 0004 dropped this index when nothing was deleted;
-- it costs each commit one more page, at the right edge of the index since
-- interaction IDs are UUIDv7 (time-ordered).
--
-- The purge keeps the interaction of the newest event, so that max(seq),
-- from which the next number is made, never goes back.

CREATE INDEX events_interaction ON events (interaction_id);

-- How far the log may have holes: the highest seq of an event a purge
-- deleted (one row, id 1; none before the first purge). A live stream
-- resuming from before it may have missed the end of a question it
-- shows, and is given the whole pending list instead.
CREATE TABLE purge_state (
    id             INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    events_through INTEGER NOT NULL
) STRICT;
