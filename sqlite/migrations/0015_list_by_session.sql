-- The inbox's detail view lists the other questions of an interaction's
-- session (ListInteractions with SessionID), newest first: a range of
-- this index. Questions without a session are not in it; the list's
-- condition says session_id <> '' so that the index applies.

CREATE INDEX interactions_session
    ON interactions (session_id, created_at DESC, id DESC)
    WHERE session_id <> '';
