-- interactions_pending_due (migration 0013) orders the pending questions by
-- coalesce(deadline, the largest integer), id: the same order as
-- interactions_pending_deadline's (deadline, id) for every question with a
-- deadline. The deadline timers, the due questions and the due counts now
-- read it with coalesce(deadline, …) <= a time, a range that holds no
-- question without a deadline, so the second index is dropped: every
-- question and every answer changed both.
DROP INDEX IF EXISTS interactions_pending_deadline;
