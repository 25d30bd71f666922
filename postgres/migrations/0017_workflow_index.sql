-- The engine counts the votes of pending interactions with a workflow
-- again every minute (broker.recountAll): an index of those alone, so the
-- work grows with the questions that vote, not with every pending one.

CREATE INDEX interactions_workflow
    ON interactions (status, created_at DESC, id DESC)
    WHERE workflow IS NOT NULL;
