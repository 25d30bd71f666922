-- interactions_pending_due (migration 0012) orders the pending questions by
-- coalesce(deadline, 'infinity'), id: the same order as
-- interactions_pending_deadline's (deadline, id) for every question with a
-- deadline. The deadline timers, the due questions and the due counts now
-- read it with coalesce(deadline, 'infinity') <= a time, a range that holds
-- no question without a deadline, so the second index is dropped: every
-- question and every answer changed both.
DROP INDEX IF EXISTS interactions_pending_deadline;

-- The creation indexes stay descending here (SQLite's are ascending since
-- its migration 22). Made ascending as well, the indexes were 27 % smaller
-- and a question wrote 8 % less WAL than with this drop alone, but
-- PostgreSQL's own CPU per round trip rose from 0.87-0.97 to 1.40-1.42 ms
-- with 16 agents and from 0.89-0.99 to 2.31 ms with 256 (hitl bench --db,
-- interleaved runs; dropping the index above alone moved neither), and
-- round trips fell by a fifth to two fifths.
