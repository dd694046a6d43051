-- What a job holds across replicas (issue 27, docs/jobs.md).
--
-- slots are the caller's concurrency slots the job took at admission, as
-- the guard wrote them (JSON: the semaphore keys and the holder id): they
-- belong to the job, not to the request that submitted it, and are
-- released by whichever process moves the job to a final state. NULL for a
-- job that holds none.
ALTER TABLE jobs ADD COLUMN slots TEXT;

-- idempotency_key is the Idempotency-Key header of the submission: the
-- same key from the same owner within a day gives the same job. NULL when
-- the request had none; a key older than a day is cleared when reused.
ALTER TABLE jobs ADD COLUMN idempotency_key TEXT;
CREATE UNIQUE INDEX jobs_owner_idempotency_key ON jobs (owner, idempotency_key) WHERE idempotency_key IS NOT NULL;
