-- Single sign-on: a user may come from an OpenID provider (the ID
-- token's issuer and subject name them there, whatever their email), and
-- any user may be disabled. Each sign-in attempt's state is used once:
-- sign_in_states keeps the SHA-256 of the used ones until they expire.

ALTER TABLE users ADD COLUMN issuer TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN subject TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0;

CREATE UNIQUE INDEX users_subject ON users (issuer, subject) WHERE subject <> '';

CREATE TABLE sign_in_states (
    hash       BLOB    NOT NULL PRIMARY KEY,
    expires_at INTEGER NOT NULL
) STRICT;

CREATE INDEX sign_in_states_expires ON sign_in_states (expires_at);
