-- Jobs and their files (package jobs): PostgreSQL's spelling of
-- migrations/0002_jobs.sql. River's own tables are made by rivermigrate
-- with the riverpgxv5 driver, not here.
CREATE TABLE jobs (
    id               TEXT    PRIMARY KEY,
    type             TEXT    NOT NULL,
    owner            TEXT    NOT NULL,
    state            TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    input            TEXT    NOT NULL,
    result           TEXT,
    error            TEXT,
    refs             TEXT    NOT NULL DEFAULT '[]',
    input_files      INTEGER NOT NULL DEFAULT 0,
    progress_done    BIGINT  NOT NULL DEFAULT 0,
    progress_total   BIGINT  NOT NULL DEFAULT 0,
    progress_message TEXT    NOT NULL DEFAULT '',
    attempts         INTEGER NOT NULL DEFAULT 0,
    ticket           BIGINT,
    cancel_requested INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
    version          BIGINT  NOT NULL DEFAULT 1,
    created_at       TEXT    NOT NULL,
    started_at       TEXT,
    finished_at      TEXT,
    expires_at       TEXT
);

CREATE INDEX jobs_owner_created_at ON jobs (owner, created_at);
CREATE INDEX jobs_state ON jobs (state);
CREATE INDEX jobs_finished_at ON jobs (finished_at) WHERE finished_at IS NOT NULL;

CREATE TABLE job_files (
    job_id     TEXT    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    name       TEXT    NOT NULL,
    role       TEXT    NOT NULL CHECK (role IN ('input', 'output')),
    media_type TEXT    NOT NULL,
    size_bytes BIGINT  NOT NULL CHECK (size_bytes >= 0),
    sha256     TEXT    NOT NULL CHECK (length(sha256) = 64),
    source     TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    expires_at TEXT,
    PRIMARY KEY (job_id, name)
);

CREATE INDEX job_files_expires_at ON job_files (expires_at) WHERE expires_at IS NOT NULL;
