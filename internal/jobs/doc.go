// Package jobs is Toolhost's job subsystem (ADR-027's jobs API below HTTP):
// the job store, the runner, and the files jobs take and make. A job is one
// run of a job type — a tool's run.job.type — for an owner, with an input
// document, input files, and a result document and output files when it
// succeeds. The HTTP routes (submit, get, events, file download, retry,
// cancel) are thin over [Service]; nothing here knows HTTP.
//
// # States
//
//	queued ──▶ running ──▶ succeeded
//	   │          ├──────▶ failed      ──Retry──▶ queued
//	   └──Cancel──┴──────▶ cancelled   ──Retry──▶ queued
//
// A job is queued by [Service.Submit] and running once a worker has claimed
// it. It succeeds when its [Handler] returns a result, fails with the
// handler's *toolerr.Error (any other error is execution_failed, logged, not
// published), and is cancelled by [Service.Cancel]: at once while queued, by
// cancelling the handler's context while running. [Service.Retry] queues a
// failed or cancelled job again with the same input and files. Attempts
// counts every run started.
//
// # Job types
//
// The handler of a job type is looked up when it is needed, not fixed at
// Open: Config.Resolve (or the fixed Config.Handlers map) is asked at every
// Submit, when a job's turn comes, and when an interrupted run is settled,
// so job types may come and go while the service runs. A job whose type
// has no handler any more when its turn comes fails once with unknown_tool;
// its owner may Retry it once the type is back.
//
// # Runner
//
// Jobs run on River (github.com/riverqueue/river) with its riversqlite
// driver, in the same SQLite file as the rest of the store (the store's
// single writer connection, as riversqlite asks). [Open] applies River's own
// migrations with rivermigrate. The jobs table is the truth the API reports;
// a River job is only a ticket to run one of ours: the job row, its files'
// rows and its ticket are inserted in one transaction, so a job is never
// stored without a way to run, nor run without being stored. A job may use
// several tickets in its life (a retry, a rerun after a crash); a worker
// given a ticket that is no longer its job's does nothing.
//
// # Files
//
// Files live under DataDir/jobs/<job id>/in and /out, read-only, each with
// a row naming its sniffed media type, size and SHA-256. An upload is read
// through a limit that fails the read past the size limit, and its type is
// decided by package sniff from its first bytes, never from its name or a
// Content-Type; a file whose type the submission does not accept is refused
// before the rest is read and before any job exists. A handler writes its
// outputs into Run.OutDir; every regular file there becomes an output file
// when it succeeds. Output that is a file therefore always comes from a job.
//
// Files are served only to their job's owner ([Service.OpenFile]) or to
// whoever holds a signed URL ([Service.SignedURL], [Service.OpenSigned]):
// HMAC-SHA256 over the job id, the file name and the expiry, valid until
// the earlier of its own expiry and the file's. A finished job's files expire
// FileTTL after it finished: they are refused from then on (ErrExpired) and
// the sweeper deletes them, from disk first and then their rows, every
// SweepInterval. Job rows go after JobRetention. While a job is queued or
// running its files have no expiry.
//
// # References
//
// An input can be a [Reference] instead of an upload: a result file of an
// earlier job of the same owner (hard-linked into the new job, copied where
// links fail, so each has its own expiry), or a media object resolved by a
// [MediaStore] hook (none exists yet; without one media references are
// refused with ErrNoMediaStore). Another owner's file is refused exactly as
// a missing one is (ErrReference); an expired one with ErrExpired; the
// accepted types and size limit apply as to uploads.
//
// # Restart
//
// On a SQLite store, Open takes an exclusive flock on the files folder
// (DataDir/jobs, or Config.FilesDir), so one process owns the jobs of a
// data directory; the kernel drops the lock when the process dies. The
// replicas of a PostgreSQL store share the folder and take no lock.
// Open then settles what a previous process left: a queued job keeps its
// River ticket, or gets a new one if River had already handed the old one
// out; a job left running was cut short by a crash and fails with
// worker_crashed, unless its handler is Retryable and has runs left
// (MaxAttempts), in which case it runs again. [Service.Close] stops River
// gracefully within its context, then cancels the handlers still running; a
// job interrupted that way is requeued when Retryable, else fails with
// service_unavailable, which the caller may retry. Nothing is left
// silently queued or running.
//
// # A full data folder
//
// The jobs folder, or the database's, is full when its free space is below
// Config.MinFreeBytes or a write there failed for lack of space (ENOSPC,
// EDQUOT, SQLITE_FULL) and no check since found room ([Service.Storage]).
// Then Submit refuses with ErrStorageFull, leaving nothing behind; a queued
// job is not started and shows CodeStorageFull as the reason it waits,
// until a check (every StorageInterval) finds room and gives it a new
// ticket; a run that cannot write its outputs fails with CodeStorageFull,
// retryable by its owner. The change into and out of full is logged with
// the folder.
//
// # A busy database
//
// The statements a request waits for — Submit's transaction and its reads
// of referenced files, Get, Cancel and Retry, the file and signed-URL
// lookups, Subscribe's snapshot — run under [store.Budget], not the
// writer's five-second [store.BusyTimeout]. When another process holds the
// database's write lock (or an in-process writer holds the one writer
// connection) past the budget, the call fails with an error wrapping
// [store.ErrBusy] and changes nothing: a refused submission's files are
// removed and its rows rolled back, as for any other refusal. The reading
// of uploads is not under the budget (it has its own deadlines, the
// HTTP layer's); the budget starts once the files are on disk. Workers,
// the sweeper and recovery keep the busy timeout: nobody waits for them.
//
// # Events
//
// [Service.Subscribe] streams a job's state changes and progress, for
// server-sent events: a snapshot first, then every state change once and
// progress reports (merged into the latest when the reader is slow), ending
// after a final state. On PostgreSQL the events of every replica's runs
// reach every replica's subscribers by LISTEN/NOTIFY (notify.go); on any
// store the followed jobs are read again every Config.EventPoll, should
// an event have been lost.
package jobs
