-- Interactions that ended long ago are purged (hitl serve --retention,
-- hitl purge), with their events. Deleting an interaction makes
-- PostgreSQL look for events that still refer to it (the foreign key), and
-- the purge deletes an interaction's events by interaction: without an
-- index on events.interaction_id both would read the whole log, for every
-- interaction purged. 0004 dropped this index when nothing was deleted.

CREATE INDEX IF NOT EXISTS events_interaction ON events (interaction_id);

-- How far the log may have holes: the highest seq of an event a purge
-- deleted (one row, id 1; none before the first purge). A live stream
-- resuming from before it may have missed the end of a question it
-- shows, and is given the whole pending list instead.
CREATE TABLE purge_state (
    id             integer NOT NULL PRIMARY KEY CHECK (id = 1),
    events_through bigint  NOT NULL
);
