-- The abuse log aggregates: PostgreSQL's spelling of
-- migrations/0005_abuse_counts.sql.
ALTER TABLE abuse_log ADD COLUMN bucket TEXT NOT NULL DEFAULT '';
ALTER TABLE abuse_log ADD COLUMN last_at TEXT;
ALTER TABLE abuse_log ADD COLUMN count BIGINT NOT NULL DEFAULT 1 CHECK (count >= 1);

CREATE INDEX abuse_log_bucket ON abuse_log (bucket, tool, reason) WHERE bucket != '';
