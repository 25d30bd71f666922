-- rules_version counts the changes to the rules: every insert, update and
-- delete on rules adds one, in its own transaction. A server keeps the
-- rules in force in memory, indexed, and reads this one row before each
-- action's rules are applied: a rule made or revoked anywhere (another
-- process on this file included) applies at once.

CREATE TABLE rules_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);

INSERT INTO rules_version (id, version) VALUES (1, 0);

CREATE TRIGGER rules_version_insert AFTER INSERT ON rules
BEGIN
    UPDATE rules_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER rules_version_update AFTER UPDATE ON rules
BEGIN
    UPDATE rules_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER rules_version_delete AFTER DELETE ON rules
BEGIN
    UPDATE rules_version SET version = version + 1 WHERE id = 1;
END;
