package jobs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"modernc.org/sqlite"

	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/jobs/sniff"
	"github.com/toolhost/toolhost/internal/store"
)

// The full-disk tests mount a small tmpfs as the jobs folder (or the whole
// data folder, database included), fill it with a file, and free it again.

// MountTmpfs mounts a tmpfs of size bytes on dir (made if missing) and
// unmounts it when the test ends, after everything the test opened later
// has closed. It skips the test where mounting is not allowed.
func MountTmpfs(t *testing.T, dir string, size int64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("size=%d,mode=0700", size))
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		t.Skipf("mounting a tmpfs is not allowed here (%v): the full-disk test needs one", err)
	}
	if err != nil {
		t.Fatalf("mounting a tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
			unix.Unmount(dir, unix.MNT_DETACH)
		}
	})
}

// freeBytes is the free space of dir's file system.
func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// fill writes dir/filler.bin until dir's file system has at most leave
// bytes free (none when it runs out first), and returns its path.
func fill(t *testing.T, dir string, leave int64) string {
	t.Helper()
	path := filepath.Join(dir, "filler.bin")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		n := freeBytes(t, dir) - leave
		if n <= 0 {
			return path
		}
		if _, err := f.Write(chunk[:min(n, int64(len(chunk)))]); err != nil {
			if errors.Is(err, unix.ENOSPC) {
				return path
			}
			t.Fatal(err)
		}
	}
}

// logBuffer collects a Service's log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if os.Getenv("TOOLHOST_JOBS_LOG") != "" {
		os.Stderr.Write(p)
	}
	return l.b.Write(p)
}

// lines returns the lines holding every one of parts.
func (l *logBuffer) lines(parts ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for line := range strings.Lines(l.b.String()) {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			out = append(out, line)
		}
	}
	return out
}

// fullEnv is a data folder for the full-disk tests: the database at db,
// the data folder data, and the log.
type fullEnv struct {
	data, db string
	log      *logBuffer
	st       *store.Store
}

// openFull opens the store at e.db and the jobs subsystem on e.data, with
// a storage check every 20 ms and a threshold of minFree.
func (e *fullEnv) open(t *testing.T, handlers map[string]jobs.Handler, minFree int64, edit func(*jobs.Config)) *jobs.Service {
	t.Helper()
	st, err := store.Open(context.Background(), e.db)
	if err != nil {
		t.Fatal(err)
	}
	e.st = st
	e.log = &logBuffer{}
	cfg := jobs.Config{
		Store: st, DataDir: e.data, Handlers: handlers, FileTTL: time.Hour,
		SigningKey: bytes.Repeat([]byte("k"), 32), SweepInterval: time.Hour, PollInterval: 50 * time.Millisecond,
		MinFreeBytes: minFree, StorageInterval: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if edit != nil {
		edit(&cfg)
	}
	svc, err := jobs.Open(context.Background(), cfg)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := svc.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
		st.Close()
	})
	return svc
}

// left counts the job rows and lists what the jobs folder holds besides
// the lock and the filler.
func (e *fullEnv) left(t *testing.T) (rows int, entries []string) {
	t.Helper()
	if err := e.st.ReadDB().QueryRow(`SELECT count(*) FROM jobs`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(filepath.Join(e.data, "jobs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if de.Name() != ".lock" && de.Name() != "filler.bin" {
			entries = append(entries, de.Name())
		}
	}
	return rows, entries
}

// eventually polls cond until it holds, failing after waitFor.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(waitFor); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not so after %s", what, waitFor)
		}
	}
}

// bigPDF is size bytes that sniff as a PDF.
func bigPDF(size int) []byte {
	b := make([]byte, size)
	copy(b, "%PDF-1.7\n")
	return b
}

// TestStorageFullSubmission: with the jobs folder below its threshold a
// submission is refused before anything is read; with room above the
// threshold but not for the upload, the write fails, the partial file is
// removed and the refusal is the same; neither leaves a file or a row. The
// storage condition and the log name the folder, and once there is room
// again a submission runs to its end.
func TestStorageFullSubmission(t *testing.T) {
	dir := t.TempDir()
	e := &fullEnv{data: filepath.Join(dir, "data"), db: filepath.Join(dir, "toolhost.db")}
	root := filepath.Join(e.data, "jobs")
	MountTmpfs(t, root, 2<<20)
	svc := e.open(t, map[string]jobs.Handler{"stamp": stamp()}, 512<<10, nil)
	pdf := pdfFixture(t)

	filler := fill(t, root, 256<<10)
	_, err := svc.Submit(context.Background(), jobs.Submission{Owner: "alice", Type: "stamp", Input: json.RawMessage(`{}`),
		Files: jobs.Uploads(upload("a.pdf", pdf)), Accept: []string{sniff.PDF}})
	if !errors.Is(err, jobs.ErrStorageFull) || !strings.Contains(err.Error(), root) {
		t.Fatalf("Submit below the threshold: %v, want ErrStorageFull naming %s", err, root)
	}
	if rows, entries := e.left(t); rows != 0 || len(entries) != 0 {
		t.Fatalf("a refused submission left %d rows and %v", rows, entries)
	}
	st := svc.Storage()
	if !st.Full || st.Folder != root || st.Reason != jobs.ReasonBelowThreshold || st.FreeBytes >= 512<<10 || st.MinFreeBytes != 512<<10 {
		t.Errorf("Storage below the threshold: %+v", st)
	}
	if lines := e.log.lines("the data folder is full", "folder="+root, "reason=below_threshold"); len(lines) != 1 {
		t.Errorf("log lines of the full folder: %q", lines)
	}

	// Room above the threshold, not for the upload: its write fails.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the folder has room", func() bool { return !svc.Storage().Full })
	filler = fill(t, root, 1<<20)
	_, err = svc.Submit(context.Background(), jobs.Submission{Owner: "alice", Type: "stamp", Input: json.RawMessage(`{}`),
		Files: jobs.Uploads(upload("small.pdf", pdf), upload("big.pdf", bigPDF(1536<<10))), Accept: []string{sniff.PDF}})
	if !errors.Is(err, jobs.ErrStorageFull) || !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("Submit of an upload with no room: %v, want ErrStorageFull from ENOSPC", err)
	}
	var fe *jobs.FileError
	if errors.As(err, &fe) {
		t.Errorf("a failed write is reported as the upload's fault: %v", err)
	}
	if rows, entries := e.left(t); rows != 0 || len(entries) != 0 {
		t.Fatalf("a refused upload left %d rows and %v", rows, entries)
	}
	if free := freeBytes(t, root); free < 1<<20-64<<10 {
		t.Errorf("the partial upload's space was not given back: %d bytes free", free)
	}
	if lines := e.log.lines("a write failed for lack of space", "folder="+root, "no space left on device"); len(lines) != 1 {
		t.Errorf("log lines of the failed write: %q", lines)
	}
	// The failed write holds until a check finds room (the probe).
	eventually(t, "the failed write is cleared", func() bool { return !svc.Storage().Full })

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	j := submit(t, svc, "alice", "stamp", upload("a.pdf", pdf))
	if done := waitState(t, svc, j.ID, "alice", jobs.Succeeded); len(done.Files) != 2 || done.Error != nil {
		t.Errorf("the job after space returned: %+v", done)
	}
	if lines := e.log.lines("the data folder has room again", "folder="+root); len(lines) < 1 {
		t.Errorf("no log line of the recovery")
	}
}

// writer is a handler that writes {"bytes": n} bytes to out.bin, as a tool
// writes its output.
func writer() jobs.Handler {
	return jobs.Handler{Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
		var in struct {
			Bytes int `json:"bytes"`
		}
		if err := json.Unmarshal(run.Input, &in); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(run.OutDir, "out.bin"), make([]byte, in.Bytes), 0o600); err != nil {
			return nil, fmt.Errorf("writing the output: %w", err)
		}
		return json.RawMessage(`{"ok":true}`), nil
	}}
}

// TestStorageFullOutput: a job accepted with room whose handler cannot
// write its output for lack of space fails with tools.job.storage_full
// (retryable), its partial output removed; retried once there is room, it
// succeeds.
func TestStorageFullOutput(t *testing.T) {
	dir := t.TempDir()
	e := &fullEnv{data: filepath.Join(dir, "data"), db: filepath.Join(dir, "toolhost.db")}
	root := filepath.Join(e.data, "jobs")
	MountTmpfs(t, root, 4<<20)
	svc := e.open(t, map[string]jobs.Handler{"write": writer()}, 256<<10, nil)

	filler := fill(t, root, 1<<20)
	j, err := svc.Submit(context.Background(), jobs.Submission{Owner: "alice", Type: "write", Input: json.RawMessage(`{"bytes":2097152}`)})
	if err != nil {
		t.Fatal(err)
	}
	failed := waitState(t, svc, j.ID, "alice", jobs.Failed)
	if failed.Error == nil || failed.Error.Code != jobs.CodeStorageFull || !failed.Error.Retryable || len(failed.Files) != 0 {
		t.Fatalf("the job that could not write: %+v (error %+v)", failed, failed.Error)
	}
	if _, err := os.Stat(filepath.Join(root, j.ID, "out")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the partial output is still there: %v", err)
	}
	if lines := e.log.lines("a write failed for lack of space", "folder="+root, "no space left on device"); len(lines) != 1 {
		t.Errorf("log lines of the failed write: %q", lines)
	}
	if lines := e.log.lines("a run failed for lack of space", "job="+j.ID); len(lines) != 1 {
		t.Errorf("log lines of the failed run: %q", lines)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Retry(context.Background(), j.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	done := waitState(t, svc, j.ID, "alice", jobs.Succeeded)
	if len(done.Files) != 1 || done.Files[0].SizeBytes != 2<<20 || done.Attempts != 2 || done.Error != nil {
		t.Errorf("the retried job: %+v", done)
	}
}

// TestStorageFullQueuedJobWaits: a job queued when the folder fills up is
// not started: it waits queued with tools.job.storage_full as its reason,
// and runs by itself once there is room.
func TestStorageFullQueuedJobWaits(t *testing.T) {
	dir := t.TempDir()
	e := &fullEnv{data: filepath.Join(dir, "data"), db: filepath.Join(dir, "toolhost.db")}
	root := filepath.Join(e.data, "jobs")
	MountTmpfs(t, root, 2<<20)
	b := newBlocker()
	svc := e.open(t, map[string]jobs.Handler{"block": b.handler(false), "write": writer()}, 512<<10,
		func(c *jobs.Config) { c.MaxWorkers = 1 })

	gate, err := svc.Submit(context.Background(), jobs.Submission{Owner: "alice", Type: "block", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	b.wait(t)
	waiting, err := svc.Submit(context.Background(), jobs.Submission{Owner: "alice", Type: "write", Input: json.RawMessage(`{"bytes":4096}`)})
	if err != nil {
		t.Fatal(err)
	}
	filler := fill(t, root, 128<<10)
	// The only worker is free: the queued job is its next.
	if _, err := svc.Cancel(context.Background(), gate.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	waitState(t, svc, gate.ID, "alice", jobs.Cancelled)
	eventually(t, "the queued job shows why it waits", func() bool {
		j, err := svc.Get(context.Background(), waiting.ID, "alice")
		return err == nil && j.State == jobs.Queued && j.Error != nil && j.Error.Code == jobs.CodeStorageFull
	})
	// It keeps waiting (through many checks), neither started nor failed.
	time.Sleep(300 * time.Millisecond)
	if j, err := svc.Get(context.Background(), waiting.ID, "alice"); err != nil || j.State != jobs.Queued || j.Attempts != 0 {
		t.Fatalf("the waiting job: %+v %v", j, err)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	done := waitState(t, svc, waiting.ID, "alice", jobs.Succeeded)
	if done.Error != nil || done.Attempts != 1 || len(done.Files) != 1 {
		t.Errorf("the job that waited: %+v", done)
	}
}

// TestStorageFullDatabase: with the database on the full file system too
// and no threshold, the refusal comes from SQLite (SQLITE_FULL): the
// transaction rolls back, the files written for it are removed, and the
// refusal is ErrStorageFull naming the database's folder. Once there is
// room again a submission runs to its end.
func TestStorageFullDatabase(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	MountTmpfs(t, data, 4<<20)
	e := &fullEnv{data: data, db: filepath.Join(data, "toolhost.db")}
	svc := e.open(t, map[string]jobs.Handler{"stamp": stamp()}, -1, nil)
	// The write-ahead log starts empty, so that the next transaction has
	// to grow it.
	if _, err := e.st.DB().Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	filler := fill(t, data, 0)
	pad := strings.Repeat("x", 512<<10)
	_, err := svc.Submit(context.Background(), jobs.Submission{Owner: "alice", Type: "stamp",
		Input: json.RawMessage(`{"pad":"` + pad + `"}`)})
	var se *sqlite.Error
	if !errors.Is(err, jobs.ErrStorageFull) || !errors.As(err, &se) || !strings.Contains(err.Error(), data) {
		t.Fatalf("Submit with the database full: %v, want ErrStorageFull from SQLite naming %s", err, data)
	}
	if rows, entries := e.left(t); rows != 0 || len(entries) != 0 {
		t.Fatalf("a refused submission left %d rows and %v", rows, entries)
	}
	if st := svc.Storage(); !st.Full || st.Reason != jobs.ReasonWriteFailed || st.Folder != data {
		t.Errorf("Storage after SQLITE_FULL: %+v", st)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the folder has room", func() bool { return !svc.Storage().Full })
	j := submit(t, svc, "alice", "stamp", upload("a.pdf", pdfFixture(t)))
	if done := waitState(t, svc, j.ID, "alice", jobs.Succeeded); len(done.Files) != 2 {
		t.Errorf("the job after space returned: %+v", done)
	}
}

// TestStorageFullOutcome: a run that ends while the database has no room
// for its outcome is not left running: once there is room it fails with
// tools.job.storage_full (retryable), and a retry runs it to its end.
func TestStorageFullOutcome(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	MountTmpfs(t, data, 4<<20)
	e := &fullEnv{data: data, db: filepath.Join(data, "toolhost.db")}
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	gated := jobs.Handler{Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
		if run.Attempt == 1 {
			started <- struct{}{}
			<-release
		}
		return json.RawMessage(`{"ok":true}`), nil
	}}
	svc := e.open(t, map[string]jobs.Handler{"gated": gated}, -1, nil)
	j, err := svc.Submit(context.Background(), jobs.Submission{Owner: "alice", Type: "gated", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if _, err := e.st.DB().Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	filler := fill(t, data, 0)
	close(release)
	eventually(t, "the unrecorded outcome is logged", func() bool {
		return len(e.log.lines("recording a job's outcome", "job="+j.ID, "storage full")) > 0
	})
	if st := svc.Storage(); !st.Full || st.Folder != data {
		t.Errorf("Storage with the outcome unrecorded: %+v", st)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	failed := waitState(t, svc, j.ID, "alice", jobs.Failed)
	if failed.Error == nil || failed.Error.Code != jobs.CodeStorageFull || !failed.Error.Retryable {
		t.Fatalf("the run whose outcome was not recorded: %+v (error %+v)", failed, failed.Error)
	}
	if _, err := svc.Retry(context.Background(), j.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	if done := waitState(t, svc, j.ID, "alice", jobs.Succeeded); done.Attempts != 2 {
		t.Errorf("the retried job: %+v", done)
	}
}
