-- Signed-in browser sessions (issue 17, docs/hub-auth.md): a session made
-- by signing in with a user's token belongs to that user (tier user,
-- principal user:ID) and to the token it was signed in with. Both columns
-- are NULL for an anonymous browser session (tier session), as before.
-- Deleting the token (revocation) or the account deletes its sessions;
-- a disabled account's sessions stay and fail until it is enabled again.
ALTER TABLE sessions ADD COLUMN user_id INTEGER REFERENCES users (id) ON DELETE CASCADE;
ALTER TABLE sessions ADD COLUMN token_id INTEGER REFERENCES tokens (id) ON DELETE CASCADE;

CREATE INDEX sessions_token_id ON sessions (token_id) WHERE token_id IS NOT NULL;
CREATE INDEX sessions_user_id ON sessions (user_id) WHERE user_id IS NOT NULL;
