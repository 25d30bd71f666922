-- Embed tokens: short-lived credentials of one person for the
-- <hitl-prompt> element on another site's page, scoped to a few session
-- IDs. Only the SHA-256 of the secret is stored; a token goes with its
-- user (ON DELETE CASCADE), and expired ones are deleted as new ones are
-- made.

CREATE TABLE embed_tokens (
    id          TEXT    NOT NULL PRIMARY KEY,
    user_name   TEXT    NOT NULL REFERENCES users (name) ON DELETE CASCADE,
    session_ids TEXT    NOT NULL,
    prefix      TEXT    NOT NULL,
    hash        BLOB    NOT NULL UNIQUE,
    created_by  TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
) STRICT;

CREATE INDEX embed_tokens_user ON embed_tokens (user_name, created_at);
CREATE INDEX embed_tokens_expires ON embed_tokens (expires_at);
