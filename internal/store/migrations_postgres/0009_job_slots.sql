-- What a job holds across replicas (issue 27): PostgreSQL's spelling of
-- migrations/0009_job_slots.sql.
ALTER TABLE jobs ADD COLUMN slots TEXT;

ALTER TABLE jobs ADD COLUMN idempotency_key TEXT;
CREATE UNIQUE INDEX jobs_owner_idempotency_key ON jobs (owner, idempotency_key) WHERE idempotency_key IS NOT NULL;
