-- Who decides and how: an interaction's consensus, the person it was asked
-- for (on_behalf_of), the votes cast so far and its claim, as one JSON
-- value (NULL when the first answer wins and nobody claimed it). Votes and
-- claims change it while the interaction is pending, under its row lock.

ALTER TABLE interactions ADD COLUMN workflow text;
