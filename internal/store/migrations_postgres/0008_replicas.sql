-- What replicas share beyond the rows above (issue 18, docs/store.md):
-- PostgreSQL's spelling of migrations/0008_replicas.sql.
CREATE TABLE shared_keys (
    name       TEXT PRIMARY KEY,
    key        TEXT NOT NULL CHECK (length(key) >= 64),
    created_at TEXT NOT NULL DEFAULT utc_now_text()
);

ALTER TABLE jobs ADD COLUMN lease_until TEXT;
