-- The abuse log aggregates (package abuse, docs/abuse.md): a flood of
-- refusals is one row per (caller, principal, tool, reason, reported,
-- minute) with a count, written off the request path by one writer,
-- instead of one row per refused request.
--
-- bucket is the start of the row's time bucket (UTC RFC 3339 with
-- milliseconds, as at); '' for rows written before this migration, which
-- stay one event each. at is the first event of the row, last_at its last
-- (NULL: the same as at). count is how many events the row stands for.
ALTER TABLE abuse_log ADD COLUMN bucket TEXT NOT NULL DEFAULT '';
ALTER TABLE abuse_log ADD COLUMN last_at TEXT;
ALTER TABLE abuse_log ADD COLUMN count INTEGER NOT NULL DEFAULT 1 CHECK (count >= 1);

-- The writer finds the row of a key by its bucket first.
CREATE INDEX abuse_log_bucket ON abuse_log (bucket, tool, reason) WHERE bucket != '';
