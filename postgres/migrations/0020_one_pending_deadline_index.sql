-- interactions_pending_due (migration 0012) orders the pending questions by
-- coalesce(deadline, 'infinity'), id: the same order as
-- interactions_pending_deadline's (deadline, id) for every question with a
-- deadline. The deadline timers, the due questions and the due counts now
-- read it with coalesce(deadline, 'infinity') <= a time, a range that holds
-- no question without a deadline, so the second index is dropped: every
-- question and every answer changed both.
DROP INDEX IF EXISTS interactions_pending_deadline;

-- The indexes on the creation time were descending, for the lists' newest
-- first. A new question's entry then went in at each index's left edge,
-- where a B-tree splits a full page in two and leaves both halves half
-- empty; at the right edge of an ascending index PostgreSQL splits a full
-- page so the left one stays full (fillfactor) and inserts without a
-- search (its rightmost-leaf fast path). An ascending index is read
-- backwards for ORDER BY created_at DESC, id DESC, and the cursors'
-- ranges are the same.
DROP INDEX interactions_created;
CREATE INDEX interactions_created ON interactions (created_at, id);

DROP INDEX interactions_status_created;
CREATE INDEX interactions_status_created ON interactions (status, created_at, id);

DROP INDEX interactions_session;
CREATE INDEX interactions_session
    ON interactions (session_id, created_at, id)
    WHERE session_id <> '';

DROP INDEX interactions_workflow;
CREATE INDEX interactions_workflow
    ON interactions (status, created_at, id)
    WHERE workflow IS NOT NULL;
