package jobs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/jobs/sniff"
	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// River starts goroutines (producers, the notifier, leader election,
// maintenance); Close must stop every one of them.
func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir) // does not return: the parent kills it
		return
	}
	goleak.VerifyTestMain(m)
}

// waitFor bounds every poll of a test, so that a hang fails instead of
// blocking; it is a failure detector, not a timing assertion.
const waitFor = 60 * time.Second

// clock is a settable clock for file expiry and signed URLs.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// env is one data directory (its job files) and its store: the SQLite
// file in the directory, or a PostgreSQL schema of its own (newEnvOn).
type env struct {
	dir   string
	db    string // what store.Open takes
	clock *clock
}

// newEnv is an env on SQLite, for the tests of what only one machine has
// (a crash found at Open, a full disk, a locked file).
func newEnv(t *testing.T) *env {
	return newEnvOn(t, storetest.SQLite(t))
}

// newEnvOn is an env on backend b (storetest.Run).
func newEnvOn(t *testing.T, b storetest.Backend) *env {
	dir := t.TempDir()
	db := b.Target
	if b.Name == "sqlite" {
		db = filepath.Join(dir, "toolhost.db")
	}
	return &env{dir: dir, db: db, clock: newClock()}
}

// open opens the store and the jobs subsystem on e with handlers, and
// closes both when the test ends (Close is idempotent, so a test may close
// them earlier).
func (e *env) open(t *testing.T, handlers map[string]jobs.Handler, edit func(*jobs.Config)) *jobs.Service {
	t.Helper()
	st, err := store.Open(context.Background(), e.db)
	if err != nil {
		t.Fatal(err)
	}
	cfg := jobs.Config{
		Store:         st,
		DataDir:       e.dir,
		Handlers:      handlers,
		FileTTL:       time.Hour,
		SigningKey:    bytes.Repeat([]byte("k"), 32),
		SweepInterval: time.Hour, // tests sweep by hand unless they say so
		PollInterval:  50 * time.Millisecond,
		Now:           e.clock.Now,
		Logger:        testLogger(),
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

// pdfFixture is a real PDF from the repository's fixtures.
func pdfFixture(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pdf", "letter_3pages.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pngBytes is a real 2×2 PNG.
func pngBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// stampMark is what the stamp handler appends to a PDF.
const stampMark = "\n%stamped\n"

// stamp is a file-to-file handler: it appends a PDF comment to every input
// file and writes the result as stamped-<name>, reporting progress per file.
func stamp() jobs.Handler {
	return jobs.Handler{Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
		var names []string
		for i, f := range run.Files {
			if f.MediaType != sniff.PDF {
				return nil, toolerr.Raised(toolerr.InvalidParameters, false)
			}
			in, err := os.ReadFile(f.Path)
			if err != nil {
				return nil, err
			}
			name := "stamped-" + f.Name
			if err := os.WriteFile(filepath.Join(run.OutDir, name), append(in, stampMark...), 0o600); err != nil {
				return nil, err
			}
			names = append(names, name)
			run.Progress(jobs.Progress{Done: int64(i + 1), Total: int64(len(run.Files)), Message: "stamped " + f.Name})
		}
		return json.Marshal(map[string]any{"files": names})
	}}
}

// blocker is a handler that reports progress, says it started, and waits
// for its context to end.
type blocker struct {
	started chan string
}

func newBlocker() *blocker { return &blocker{started: make(chan string, 16)} }

func (b *blocker) handler(retryable bool) jobs.Handler {
	return jobs.Handler{Retryable: retryable, Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
		run.Progress(jobs.Progress{Done: 0, Total: 1, Message: "waiting"})
		b.started <- run.JobID
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}}
}

// wait returns the id of the next job the blocker started.
func (b *blocker) wait(t *testing.T) string {
	t.Helper()
	select {
	case id := <-b.started:
		return id
	case <-time.After(waitFor):
		t.Fatal("no blocking job started")
		return ""
	}
}

// quick is a handler that succeeds at once with {"ok": true}.
func quick() jobs.Handler {
	return jobs.Handler{Retryable: true, Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
		return json.RawMessage(`{"ok":true}`), nil
	}}
}

// flaky fails with a tool error on its first attempt and succeeds after.
func flaky() jobs.Handler {
	return jobs.Handler{Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
		if run.Attempt == 1 {
			e := toolerr.Raised(toolerr.ExecutionFailed, true)
			e.Message = "the engine hiccuped"
			return nil, e
		}
		return json.RawMessage(`{"attempt":2}`), nil
	}}
}

// waitState polls job id until it is in state want and returns it.
func waitState(t *testing.T, svc *jobs.Service, id, owner string, want jobs.State) *jobs.Job {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		j, err := svc.Get(context.Background(), id, owner)
		if err != nil {
			t.Fatalf("Get(%s): %v", id, err)
		}
		if j.State == want {
			return j
		}
		if j.State.Final() || time.Now().After(deadline) {
			t.Fatalf("job %s is %s (error %+v), want %s", id, j.State, j.Error, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// submit submits a job of typ for owner with the given PDF uploads (name,
// content pairs), accepting PDFs.
func submit(t *testing.T, svc *jobs.Service, owner, typ string, files ...jobs.Upload) *jobs.Job {
	t.Helper()
	// A submission refused as busy (its statements outwaited
	// store.RequestBusyBudget behind River's writes, as a loaded machine
	// under -race makes them) is sent again, as a client retries the 503;
	// nothing of it was kept.
	for attempt := 1; ; attempt++ {
		for _, f := range files {
			if s, ok := f.Content.(io.Seeker); ok {
				s.Seek(0, io.SeekStart)
			}
		}
		j, err := svc.Submit(context.Background(), jobs.Submission{
			Owner: owner, Type: typ, Input: json.RawMessage(`{"tool":"stamp"}`),
			Files: jobs.Uploads(files...), Accept: []string{sniff.PDF},
		})
		if errors.Is(err, store.ErrBusy) && attempt < 10 {
			t.Logf("Submit(%s), attempt %d: %v", typ, attempt, err)
			continue
		}
		if err != nil {
			t.Fatalf("Submit(%s): %v", typ, err)
		}
		return j
	}
}

func upload(name string, b []byte) jobs.Upload {
	return jobs.Upload{Name: name, Content: bytes.NewReader(b)}
}

// readFile downloads file name of job id as owner.
func readFile(t *testing.T, svc *jobs.Service, id, name, owner string) []byte {
	t.Helper()
	d, err := svc.OpenFile(context.Background(), id, name, owner)
	if err != nil {
		t.Fatalf("OpenFile(%s, %s): %v", id, name, err)
	}
	defer d.Content.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(d.Content); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// countJobs counts the job rows and the job directories of e.
func (e *env) countJobs(t *testing.T) (rows, dirs int) {
	t.Helper()
	st, err := store.Open(context.Background(), e.db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.ReadDB().QueryRow(`SELECT count(*) FROM jobs`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(e.dir, "jobs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range entries {
		if de.IsDir() {
			dirs++
		}
	}
	return rows, dirs
}

// testLogger logs to stderr when TOOLHOST_JOBS_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("TOOLHOST_JOBS_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
