-- Nothing looks events up by interaction, and no interaction is ever
-- deleted, so the foreign key does not need this index either: every event
-- written maintained it for nothing. (The SQLite store drops it too.)
DROP INDEX IF EXISTS events_interaction;
