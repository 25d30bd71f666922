-- Interactions that ended long ago are purged (hitl serve --retention,
-- hitl purge), with their events. Deleting an interaction makes
-- PostgreSQL look for events that still refer to it (the foreign key), and
-- the purge deletes an interaction's events by interaction: without an
-- index on events.interaction_id both would read the whole log, for every
-- interaction purged. 0004 dropped this index when nothing was deleted.

CREATE INDEX IF NOT EXISTS events_interaction ON events (interaction_id);
