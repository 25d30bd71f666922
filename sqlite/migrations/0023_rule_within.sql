-- A rule a person's answer makes may decide only the actions that person
-- could answer: within is the maker's audience as JSON ({"user": …,
-- "groups": […]}), NULL for a rule that decides whatever its other
-- scope says (an admin's, or one made through the rules API). Rules made
-- before this migration keep deciding as they did.

ALTER TABLE rules ADD COLUMN within TEXT;
