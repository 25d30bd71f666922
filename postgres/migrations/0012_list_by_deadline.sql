-- The inbox lists pending questions soonest deadline first, those without
-- a deadline last (ListInteractions with SortDeadline): ordered by this
-- expression and id, with a cursor on both, a page is a range of this
-- index. Only pending questions are listed this way often, so the index
-- holds only them (as interactions_pending_deadline does).

CREATE INDEX interactions_pending_due
    ON interactions (coalesce(deadline, 'infinity'::timestamptz), id)
    WHERE status = 'pending';
