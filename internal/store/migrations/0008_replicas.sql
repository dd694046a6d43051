-- What replicas share beyond the rows of the other migrations (issue 18,
-- docs/store.md). The same tables on SQLite, where one process owns the
-- file, so that both dialects keep one schema.
--
-- shared_keys holds a key every process of the store must use alike: the
-- key of signed download URLs ("signing"), lower-case hex of at least 32
-- random bytes, made by the first process that needs it. On SQLite it is
-- taken from the data folder's signing.key when that file exists, so the
-- URLs signed before stay valid.
CREATE TABLE shared_keys (
    name       TEXT PRIMARY KEY,
    key        TEXT NOT NULL CHECK (length(key) >= 64),
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- lease_until is when the run of a running job stops being vouched for:
-- the process running it moves it forward while the run lives (jobs'
-- LeaseTTL). A ticket delivered again for a running job whose lease has
-- not run out belongs to a live run elsewhere and waits; one whose lease
-- ran out was cut short (the replica died) and is settled like a crash.
-- NULL when the job is not running.
ALTER TABLE jobs ADD COLUMN lease_until TEXT;
