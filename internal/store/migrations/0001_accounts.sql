-- Accounts and their API tokens (package auth).
--
-- Timestamps are UTC text in RFC 3339 with milliseconds,
-- "2026-11-30T12:00:00.000Z": readable, and they sort as text.

-- A user is an account. Names are compared without regard to ASCII case,
-- so "Alice" and "alice" are one account; the first spelling is kept.
-- A disabled account keeps its tokens, but none of them authenticates.
CREATE TABLE users (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    disabled   INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
    created_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- A token is stored only as the lower-case hex SHA-256 of its plaintext;
-- the plaintext is shown once, when the token is made, and never stored.
-- last_used_at is updated at most once a minute per token.
CREATE TABLE tokens (
    id           INTEGER PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    hash         TEXT    NOT NULL UNIQUE CHECK (length(hash) = 64),
    created_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    last_used_at TEXT
);

CREATE INDEX tokens_user_id ON tokens (user_id);
