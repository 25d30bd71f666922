-- The pending questions with targets, for the counts a responder sees: a
-- server reads them once when it starts (their agent, type and targets)
-- and keeps them from events after that. An untargeted question, the
-- usual kind, has no entry here, so it costs its writes nothing.
CREATE INDEX interactions_pending_targeted ON interactions (source_agent, type)
    WHERE status = 'pending' AND targets IS NOT NULL;
