-- The inbox's counts of pending questions (per agent, per type, expiring
-- soon) read this index: one pass over the pending questions' agent, type
-- and deadline, not over the rows with their questions and contexts.
CREATE INDEX interactions_pending_counts ON interactions (source_agent, type, deadline)
    WHERE status = 'pending';
