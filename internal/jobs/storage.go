package jobs

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/toolhost/toolhost/internal/toolerr"
)

// CodeStorageFull is the job error code of a full data folder: the error
// of a run that could not write for lack of space (retryable), and the
// reason a queued job waits while the folder is full. (A submission refused
// for it is the problem tools.job.storage_full, HTTP 507.)
const CodeStorageFull toolerr.Code = "storage_full"

// storageFullError is the job error of CodeStorageFull. It is retryable:
// the same job succeeds once there is room.
func storageFullError() *toolerr.Error { return toolerr.Raised(CodeStorageFull, true) }

// The reasons of a full StorageStatus.
const (
	// ReasonBelowThreshold: the free space is below Config.MinFreeBytes.
	ReasonBelowThreshold = "below_threshold"
	// ReasonWriteFailed: a write failed for lack of space (ENOSPC, EDQUOT,
	// SQLITE_FULL), and no check since has found room again.
	ReasonWriteFailed = "write_failed"
)

// StorageStatus is the storage condition of the jobs subsystem, as /readyz
// reports it.
type StorageStatus struct {
	// Full reports that the data folder has no room: submissions are
	// refused with ErrStorageFull and queued jobs wait.
	Full bool `json:"full"`
	// Folder is the folder that is full; when none is, the jobs folder.
	Folder string `json:"folder"`
	// FreeBytes is Folder's free space (available to the process); -1
	// when it cannot be measured on this platform.
	FreeBytes int64 `json:"free_bytes"`
	// MinFreeBytes is the threshold, Config.MinFreeBytes; 0 for none.
	MinFreeBytes int64 `json:"min_free_bytes"`
	// Reason is ReasonBelowThreshold or ReasonWriteFailed when Full.
	Reason string `json:"reason,omitempty"`
	// Since is when the folder became full; zero when it is not.
	Since time.Time `json:"since,omitzero"`
}

// storageWatch is the storage condition: the folders the subsystem writes
// to, the writes that failed for lack of space, and what is owed once
// there is room again. Its methods are safe for concurrent use.
type storageWatch struct {
	// folders are the jobs folder and the database's folder (often the
	// same file system: both are measured, and a failure is charged to
	// the folder it happened in).
	folders []string
	// dbFolder is the folder SQLite's failures are charged to.
	dbFolder string
	minFree  int64 // 0: no threshold

	mu     sync.Mutex
	status StorageStatus
	// failed holds, by folder, the last write that failed for lack of
	// space since a check last found room there.
	failed map[string]failure
	seq    uint64 // numbers the failures
	// held is set when a queued job was held back, or a run's outcome
	// could not be recorded, for lack of space: resume is owed.
	held bool
	// cut are the jobs whose run ended but whose outcome could not be
	// recorded for lack of space: running in the database, run by no
	// one. resume fails them with CodeStorageFull.
	cut map[string]struct{}
}

// failure is a write that failed for lack of space, numbered so that a
// check clears only the failure it probed after, not a later one.
type failure struct {
	err error
	n   uint64
}

// newStorageWatch watches root, the jobs folder, and the folder of the
// database file dbPath.
func newStorageWatch(root, dbPath string, minFree int64) *storageWatch {
	w := &storageWatch{folders: []string{root}, dbFolder: root, minFree: max(minFree, 0),
		failed: map[string]failure{}, cut: map[string]struct{}{}}
	if dbPath != "" {
		w.dbFolder = filepath.Dir(dbPath)
		if w.dbFolder != root {
			w.folders = append(w.folders, w.dbFolder)
		}
	}
	w.status = StorageStatus{Folder: root, FreeBytes: -1, MinFreeBytes: w.minFree}
	return w
}

// isStorageFull reports whether err is a failure for lack of space:
// ErrStorageFull itself, ENOSPC
// or EDQUOT from the kernel, SQLITE_FULL from SQLite (which the unix VFS
// reports for a write that failed with ENOSPC), or SQLite's failure to grow
// its shared-memory file (SQLITE_IOERR_SHMSIZE), which on a full file
// system is the same thing.
func isStorageFull(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrStorageFull) {
		return true
	}
	for _, errno := range noSpaceErrnos {
		if errors.Is(err, errno) {
			return true
		}
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()&0xff == sqlite3.SQLITE_FULL || se.Code() == sqlite3.SQLITE_IOERR_SHMSIZE
	}
	return false
}

// storageErr returns err as an ErrStorageFull naming the folder when it is
// a failure for lack of space, and records (and, the first time since the
// folder last had room, logs) the failure; any other error is returned as
// it is.
func (s *Service) storageErr(err error) error {
	if !isStorageFull(err) || errors.Is(err, ErrStorageFull) {
		return err
	}
	folder := s.storage.folders[0]
	var se *sqlite.Error
	if errors.As(err, &se) {
		folder = s.storage.dbFolder
	}
	s.storage.mu.Lock()
	_, had := s.storage.failed[folder]
	s.storage.seq++
	s.storage.failed[folder] = failure{err: err, n: s.storage.seq}
	s.storage.mu.Unlock()
	if !had {
		// Once per episode: the next ones are the same news.
		s.log.Warn("jobs: a write failed for lack of space", "folder", folder, "error", err)
	}
	s.checkStorage(false)
	return fmt.Errorf("%w: %s: %w", ErrStorageFull, folder, err)
}

// Storage returns the storage condition, measuring the free space now. A
// write that failed for lack of space keeps the folder full until the next
// periodic check finds room there (Config.StorageInterval).
func (s *Service) Storage() StorageStatus { return s.checkStorage(false) }

// storageStatus is the condition as last measured, without measuring.
func (s *Service) storageStatus() StorageStatus {
	s.storage.mu.Lock()
	defer s.storage.mu.Unlock()
	return s.storage.status
}

// checkStorage measures the free space of every watched folder and updates
// the condition. With probe, a folder whose write failed is tried with a
// small write, and counts as having room again when that succeeds (and it
// is above the threshold); without, the failure stands. The change into
// and out of full is logged, naming the folder.
func (s *Service) checkStorage(probe bool) StorageStatus {
	w := s.storage
	type measure struct {
		folder string
		free   int64
		reason string
		cause  error
	}
	measures := make([]measure, 0, len(w.folders))
	for _, folder := range w.folders {
		free, err := freeBytes(folder)
		if err != nil {
			free = -1 // unmeasurable: only failed writes count
		}
		measures = append(measures, measure{folder: folder, free: free})
	}
	w.mu.Lock()
	failed := maps.Clone(w.failed)
	w.mu.Unlock()
	for i := range measures {
		m := &measures[i]
		f, ok := failed[m.folder]
		if w.minFree > 0 && m.free >= 0 && m.free < w.minFree {
			m.reason, m.cause = ReasonBelowThreshold, f.err
			continue
		}
		if !ok {
			continue
		}
		if probe && probeWrite(m.folder) == nil {
			w.mu.Lock()
			if w.failed[m.folder].n == f.n {
				delete(w.failed, m.folder)
			}
			w.mu.Unlock()
			continue
		}
		m.reason, m.cause = ReasonWriteFailed, f.err
	}

	next := StorageStatus{Folder: measures[0].folder, FreeBytes: measures[0].free, MinFreeBytes: w.minFree}
	// A folder below the threshold is named before one whose write
	// failed: it is the condition that refuses submissions.
	var cause error
	for _, reason := range []string{ReasonBelowThreshold, ReasonWriteFailed} {
		i := slices.IndexFunc(measures, func(m measure) bool { return m.reason == reason })
		if i >= 0 {
			m := measures[i]
			next = StorageStatus{Full: true, Folder: m.folder, FreeBytes: m.free, MinFreeBytes: w.minFree, Reason: m.reason}
			cause = m.cause
			break
		}
	}
	w.mu.Lock()
	prev := w.status
	if next.Full {
		next.Since = prev.Since
		if !prev.Full {
			next.Since = time.Now().UTC()
		}
	}
	w.status = next
	w.mu.Unlock()
	switch {
	case next.Full && (!prev.Full || prev.Folder != next.Folder):
		args := []any{"folder", next.Folder, "free_bytes", next.FreeBytes, "min_free_bytes", next.MinFreeBytes, "reason", next.Reason}
		if cause != nil {
			args = append(args, "error", cause)
		}
		s.log.Error("jobs: the data folder is full: submissions are refused and queued jobs wait", args...)
	case !next.Full && prev.Full:
		s.log.Warn("jobs: the data folder has room again: queued jobs resume", "folder", prev.Folder, "free_bytes", next.FreeBytes)
	}
	return next
}

// probeName is the file checkStorage's probe writes in a folder.
const probeName = ".storage-probe"

// probeWrite writes, syncs and removes a small file in folder.
func probeWrite(folder string) error {
	path := filepath.Join(folder, probeName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(make([]byte, 4096))
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	// Another process sharing the folder may have removed it first.
	if rerr := os.Remove(path); err == nil && !errors.Is(rerr, os.ErrNotExist) {
		err = rerr
	}
	return err
}

// hold records that a job was held back, or a run's outcome left
// unrecorded (cut, when id is not ""), for lack of space.
func (s *Service) hold(cut string) {
	s.storage.mu.Lock()
	defer s.storage.mu.Unlock()
	s.storage.held = true
	if cut != "" {
		s.storage.cut[cut] = struct{}{}
	}
}

// isCut reports whether job id's outcome is owed for lack of space.
func (s *Service) isCut(id string) bool {
	s.storage.mu.Lock()
	defer s.storage.mu.Unlock()
	_, ok := s.storage.cut[id]
	return ok
}

// storageLoop checks the storage every StorageInterval until ctx ends, and
// resumes what a full folder held back once there is room again.
func (s *Service) storageLoop(ctx context.Context) {
	defer s.sweepWG.Done()
	t := time.NewTicker(s.cfg.StorageInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if st := s.checkStorage(true); st.Full {
			continue
		}
		s.storage.mu.Lock()
		held := s.storage.held
		s.storage.held = false
		s.storage.mu.Unlock()
		if !held {
			continue
		}
		if err := s.resume(ctx); err != nil {
			s.hold("")
			if ctx.Err() == nil && !errors.Is(err, ErrClosed) {
				s.log.Warn("jobs: resuming the jobs a full data folder held back", "error", s.storageErr(err))
			}
		}
	}
}

// resume settles what a full folder held back: a run whose outcome could
// not be recorded fails with CodeStorageFull (cancelled if a cancel was
// asked for), and every queued job without a ticket River still holds
// waiting gets a new one, so that it runs. A job another ticket or a worker
// has meanwhile moved on is left alone: each transaction reads the job
// again.
func (s *Service) resume(ctx context.Context) error {
	if s.isClosed() {
		return ErrClosed
	}
	s.storage.mu.Lock()
	cut := make([]string, 0, len(s.storage.cut))
	for id := range s.storage.cut {
		cut = append(cut, id)
	}
	s.storage.mu.Unlock()
	for _, id := range cut {
		var final State
		err := s.withTx(ctx, func(tx *txn) error {
			r, err := s.getRow(ctx, tx, id)
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			s.mu.Lock()
			_, live := s.running[id]
			s.mu.Unlock()
			if r.state != Running || live {
				return nil
			}
			if r.cancelRequested {
				final = Cancelled
				return s.finalize(ctx, tx, r, Cancelled, nil, nil)
			}
			final = Failed
			return s.finalize(ctx, tx, r, Failed, nil, storageFullError())
		})
		if err != nil {
			return fmt.Errorf("settling job %s: %w", id, err)
		}
		s.storage.mu.Lock()
		delete(s.storage.cut, id)
		s.storage.mu.Unlock()
		if final != "" {
			if err := os.RemoveAll(s.outDir(id)); err != nil {
				s.log.Warn("jobs: removing the outputs of a run not recorded", "job", id, "error", err)
			}
			s.log.Warn("jobs: a run's outcome could not be recorded for lack of space", "job", id, "now", final)
			s.publishState(ctx, id)
		}
	}

	ids, err := s.rows.ListQueuedJobs(ctx)
	if err != nil {
		return fmt.Errorf("listing queued jobs: %w", err)
	}
	for _, id := range ids {
		err := s.withTx(ctx, func(tx *txn) error {
			r, err := s.getRow(ctx, tx, id)
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			if err != nil || r.state != Queued {
				return err
			}
			live, err := s.ticketLive(ctx, tx, r.ticket)
			if err != nil || live {
				return err
			}
			return s.newTicket(ctx, tx, id, r.typ)
		})
		if err != nil {
			return fmt.Errorf("resuming job %s: %w", id, err)
		}
	}
	return nil
}
