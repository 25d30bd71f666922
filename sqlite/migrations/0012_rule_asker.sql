-- A rule may be bound to the authenticated caller (an API token's or a
-- person's name) whose actions it decides: source_agent is only what an
-- agent says it is, so a rule made by answering "always" to one caller's
-- question must not decide another caller's actions under the same name.
-- '' is every caller, as before. Rules made by "always" before this
-- migration are bound to the caller that asked their question.

ALTER TABLE rules ADD COLUMN asked_by TEXT NOT NULL DEFAULT '';

UPDATE rules SET asked_by = coalesce(
    (SELECT created_by FROM interactions WHERE interactions.id = rules.interaction_id), '')
WHERE interaction_id <> '';
