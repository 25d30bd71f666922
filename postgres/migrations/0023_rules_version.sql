-- rules_version counts the changes to the rules: every statement that
-- inserts, updates or deletes rules adds one, in its own transaction (the
-- row's lock orders them). A server keeps the rules in force in memory,
-- indexed, and reads this one row before each action's rules are applied:
-- a rule made or revoked on any replica applies at once.

CREATE TABLE rules_version (
    id      integer PRIMARY KEY CHECK (id = 1),
    version bigint NOT NULL
);

INSERT INTO rules_version (id, version) VALUES (1, 0);

CREATE FUNCTION rules_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE rules_version SET version = version + 1 WHERE id = 1;
    RETURN NULL;
END
$$;

CREATE TRIGGER rules_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON rules
    FOR EACH STATEMENT EXECUTE FUNCTION rules_version_bump();
