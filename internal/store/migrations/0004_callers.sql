-- Callers beyond user accounts (package auth): applications with their
-- client-credentials tokens, capabilities granted to single tokens, and
-- browser sessions.
--
-- Timestamps are UTC text in RFC 3339 with milliseconds, as in 0001.

-- An app is an application that holds tokens of its own (tier app), as a
-- user is an account. Names follow the rules of user names and are compared
-- without regard to ASCII case; apps and users are separate namespaces. A
-- disabled app keeps its tokens, but none of them authenticates.
-- AUTOINCREMENT: an id is never given twice, since "app:ID" owns jobs.
CREATE TABLE apps (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    disabled   INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
    created_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- tokens is rebuilt so that a token belongs to a user or to an app, exactly
-- one of the two (SQLite cannot drop the NOT NULL of user_id in place).
-- Existing tokens keep their ids, hashes and times, and stay user tokens.
-- sandbox marks an app's sandbox token (small allowances); a user token is
-- never one.
CREATE TABLE tokens_new (
    id           INTEGER PRIMARY KEY,
    user_id      INTEGER REFERENCES users (id) ON DELETE CASCADE,
    app_id       INTEGER REFERENCES apps (id) ON DELETE CASCADE,
    sandbox      INTEGER NOT NULL DEFAULT 0 CHECK (sandbox IN (0, 1)),
    hash         TEXT    NOT NULL UNIQUE CHECK (length(hash) = 64),
    created_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    last_used_at TEXT,
    CHECK ((user_id IS NULL) != (app_id IS NULL)),
    CHECK (sandbox = 0 OR app_id IS NOT NULL)
);

INSERT INTO tokens_new (id, user_id, hash, created_at, last_used_at)
    SELECT id, user_id, hash, created_at, last_used_at FROM tokens;
DROP TABLE tokens;
ALTER TABLE tokens_new RENAME TO tokens;

CREATE INDEX tokens_user_id ON tokens (user_id) WHERE user_id IS NOT NULL;
CREATE INDEX tokens_app_id ON tokens (app_id) WHERE app_id IS NOT NULL;

-- A capability is granted to one token, explicitly, when the token is made;
-- no token holds one by default, and a sandbox token never holds one. Names
-- are checked by package auth against the capabilities it knows
-- (tools.net.probe for now).
CREATE TABLE token_capabilities (
    token_id   INTEGER NOT NULL REFERENCES tokens (id) ON DELETE CASCADE,
    capability TEXT    NOT NULL CHECK (capability GLOB '[a-z]*' AND capability NOT GLOB '*[^a-z0-9_.]*'),
    PRIMARY KEY (token_id, capability)
) WITHOUT ROWID;

CREATE TRIGGER token_capabilities_no_sandbox
BEFORE INSERT ON token_capabilities
WHEN (SELECT sandbox FROM tokens WHERE id = NEW.token_id) = 1
BEGIN
    SELECT RAISE(ABORT, 'a sandbox token holds no capability');
END;

-- A browser session (tier session): a random cookie value that the server
-- issues, stored only as the lower-case hex SHA-256 of the value. It has no
-- account. It expires at expires_at, fixed when it is made; expired rows are
-- deleted by PurgeSessions. AUTOINCREMENT: an id is never given twice, so a
-- new session never inherits what "session:ID" of a purged one owned.
CREATE TABLE sessions (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    hash       TEXT    NOT NULL UNIQUE CHECK (length(hash) = 64),
    created_at TEXT    NOT NULL,
    expires_at TEXT    NOT NULL
);

CREATE INDEX sessions_expires_at ON sessions (expires_at);
