-- Authentication: users (people), API tokens, browser sessions, and the
-- audit of failed logins. Secrets are never stored: a password as an
-- argon2id hash, a token or session secret as its SHA-256.

CREATE TABLE users (
    name          text        NOT NULL PRIMARY KEY,
    email         text        NOT NULL DEFAULT '',
    member_groups text[]      NOT NULL DEFAULT '{}',
    admin         boolean     NOT NULL DEFAULT false,
    password_hash text        NOT NULL,
    created_at    timestamptz NOT NULL
);

CREATE TABLE tokens (
    id            text        NOT NULL PRIMARY KEY,
    name          text        NOT NULL,
    role          text        NOT NULL CHECK (role IN ('agent', 'responder', 'admin')),
    member_groups text[]      NOT NULL DEFAULT '{}',
    prefix        text        NOT NULL,
    hash          bytea       NOT NULL UNIQUE,
    created_at    timestamptz NOT NULL
);

CREATE INDEX tokens_name ON tokens (name);

CREATE TABLE sessions (
    hash       bytea       NOT NULL PRIMARY KEY,
    user_name  text        NOT NULL REFERENCES users (name) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);

CREATE INDEX sessions_user ON sessions (user_name);
CREATE INDEX sessions_expires ON sessions (expires_at);

CREATE TABLE login_failures (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          timestamptz NOT NULL,
    username    text        NOT NULL,
    remote_addr text        NOT NULL,
    reason      text        NOT NULL
);
