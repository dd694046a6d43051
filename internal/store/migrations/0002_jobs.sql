-- Jobs and their files (package jobs). River's own tables (river_job,
-- river_queue, …) are not here: River's migrator, rivermigrate, creates
-- and upgrades them when the jobs subsystem opens.
--
-- Timestamps are UTC text in RFC 3339 with milliseconds, as in 0001.

-- A job is one run of a job type for an owner. Its state is the truth the
-- API reports; River's row (ticket) is only the means to run it, and a job
-- may use several tickets over its life (a retry, a rerun after a crash).
CREATE TABLE jobs (
    id               TEXT    PRIMARY KEY,
    type             TEXT    NOT NULL,
    owner            TEXT    NOT NULL,
    state            TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    -- The input document, JSON, as submitted.
    input            TEXT    NOT NULL,
    -- The handler's result document, JSON; set when succeeded.
    result           TEXT,
    -- The error, a toolerr.Error as JSON; set when failed.
    error            TEXT,
    -- The references the inputs were made from, a JSON array.
    refs             TEXT    NOT NULL DEFAULT '[]',
    -- How many input files the job was submitted with, so that a retry
    -- can tell whether the sweeper has taken one.
    input_files      INTEGER NOT NULL DEFAULT 0,
    progress_done    INTEGER NOT NULL DEFAULT 0,
    progress_total   INTEGER NOT NULL DEFAULT 0,
    progress_message TEXT    NOT NULL DEFAULT '',
    -- Runs started, counting reruns after a crash and retries.
    attempts         INTEGER NOT NULL DEFAULT 0,
    -- river_job.id of the ticket that runs the job now.
    ticket           INTEGER,
    cancel_requested INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
    -- Bumped by every state change, so that event streams drop stale ones.
    version          INTEGER NOT NULL DEFAULT 1,
    created_at       TEXT    NOT NULL,
    started_at       TEXT,
    finished_at      TEXT,
    -- When the job's files expire: finished_at plus the file TTL.
    expires_at       TEXT
);

CREATE INDEX jobs_owner_created_at ON jobs (owner, created_at);
CREATE INDEX jobs_state ON jobs (state);
CREATE INDEX jobs_finished_at ON jobs (finished_at) WHERE finished_at IS NOT NULL;

-- A file of a job, on disk at <data>/jobs/<job_id>/<in|out>/<name>. Names
-- are unique within a job across inputs and outputs. A file's owner is its
-- job's owner.
CREATE TABLE job_files (
    job_id     TEXT    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    name       TEXT    NOT NULL,
    role       TEXT    NOT NULL CHECK (role IN ('input', 'output')),
    -- Sniffed from the bytes, never taken from a name or a header.
    media_type TEXT    NOT NULL,
    size_bytes INTEGER NOT NULL CHECK (size_bytes >= 0),
    -- Lower-case hex SHA-256 of the content.
    sha256     TEXT    NOT NULL CHECK (length(sha256) = 64),
    -- Where an input came from: "upload", "job:<id>/<name>", "media:<id>".
    source     TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    -- NULL while the job is queued or running: nothing sweeps it then.
    expires_at TEXT,
    PRIMARY KEY (job_id, name)
);

CREATE INDEX job_files_expires_at ON job_files (expires_at) WHERE expires_at IS NOT NULL;
