-- The Idempotency-Key a person's answer was sent with, kept with the
-- result: a retry of the same answer by the same caller (its reply was
-- lost) gets the original success instead of "already answered", after a
-- restart too. '' when the answer had none.

ALTER TABLE interactions ADD COLUMN answer_key TEXT NOT NULL DEFAULT '';
