-- Request ids in the abuse log: PostgreSQL's spelling of
-- migrations/0006_abuse_request_ids.sql.
ALTER TABLE abuse_log ADD COLUMN first_request_id TEXT NOT NULL DEFAULT '';
ALTER TABLE abuse_log ADD COLUMN last_request_id TEXT NOT NULL DEFAULT '';
