-- Signed-in browser sessions (issue 17): PostgreSQL's spelling of
-- migrations/0007_signin.sql.
ALTER TABLE sessions ADD COLUMN user_id BIGINT REFERENCES users (id) ON DELETE CASCADE;
ALTER TABLE sessions ADD COLUMN token_id BIGINT REFERENCES tokens (id) ON DELETE CASCADE;

CREATE INDEX sessions_token_id ON sessions (token_id) WHERE token_id IS NOT NULL;
CREATE INDEX sessions_user_id ON sessions (user_id) WHERE user_id IS NOT NULL;
