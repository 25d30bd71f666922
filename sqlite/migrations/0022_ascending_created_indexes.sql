-- The indexes on the creation time were descending, for the lists' newest
-- first. A new question's entry then went in at each index's left edge,
-- where SQLite splits a full page in two and leaves both halves half
-- empty; at the right edge of an ascending index it starts a new page
-- instead (its append case). SQLite reads an ascending index backwards for
-- ORDER BY created_at DESC, id DESC, and the cursors' ranges are the same.
-- Measured with 3,000 questions: the creation index 50 pages, not 86, and
-- about 1.3 fewer pages written per question, 0.4 per answer.

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
