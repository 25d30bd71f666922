-- Deadlines matter only while an interaction is pending: NextDeadline and
-- DueInteractions read nothing else. interactions_status_deadline held
-- every interaction, so each answer moved its entry from the pending part
-- to the answered part, an insert no query ever read, and the index grew
-- with the history. Partial, it holds what is pending, and an answer only
-- removes an entry (as on PostgreSQL).
--
-- The two queries name it (INDEXED BY): without ANALYZE statistics the
-- planner would rather take interactions_status_created and sort.

DROP INDEX interactions_status_deadline;

CREATE INDEX interactions_pending_deadline ON interactions (deadline, id)
    WHERE status = 'pending';
