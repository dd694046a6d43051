-- Request ids in the abuse log (package abuse, docs/abuse.md): the
-- X-Request-Id of an event, so that a refusal a caller reports by the id
-- it was answered with, or a problem document's instance, leads to its
-- row and its access-log line.
--
-- A row aggregates the events of one key in one minute, so it keeps two
-- ids: first_request_id is the request of the row's first event (at),
-- last_request_id that of its last (last_at). '' when unknown: rows written
-- before this migration, and events recorded without an id.
ALTER TABLE abuse_log ADD COLUMN first_request_id TEXT NOT NULL DEFAULT '';
ALTER TABLE abuse_log ADD COLUMN last_request_id TEXT NOT NULL DEFAULT '';
