-- Authentication: users (people), API tokens, browser sessions, and the
-- audit of failed logins. Secrets are never stored: a password as an
-- argon2id hash, a token or session secret as its SHA-256.
--
-- Times are INTEGER unix milliseconds, UTC. Group lists are JSON arrays.

CREATE TABLE users (
    name          TEXT    NOT NULL PRIMARY KEY,
    email         TEXT    NOT NULL DEFAULT '',
    member_groups TEXT    NOT NULL DEFAULT '[]',
    admin         INTEGER NOT NULL DEFAULT 0,
    password_hash TEXT    NOT NULL,
    created_at    INTEGER NOT NULL
) STRICT;

CREATE TABLE tokens (
    id            TEXT    NOT NULL PRIMARY KEY,
    name          TEXT    NOT NULL,
    role          TEXT    NOT NULL CHECK (role IN ('agent', 'responder', 'admin')),
    member_groups TEXT    NOT NULL DEFAULT '[]',
    prefix        TEXT    NOT NULL,
    hash          BLOB    NOT NULL UNIQUE,
    created_at    INTEGER NOT NULL
) STRICT;

CREATE INDEX tokens_name ON tokens (name);

CREATE TABLE sessions (
    hash       BLOB    NOT NULL PRIMARY KEY,
    user_name  TEXT    NOT NULL REFERENCES users (name) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT;

CREATE INDEX sessions_user ON sessions (user_name);
CREATE INDEX sessions_expires ON sessions (expires_at);

CREATE TABLE login_failures (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    at          INTEGER NOT NULL,
    username    TEXT    NOT NULL,
    remote_addr TEXT    NOT NULL,
    reason      TEXT    NOT NULL
) STRICT;
