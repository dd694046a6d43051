package jobs_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/jobs/sniff"
	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// crashChildEnv names the data directory a re-run of the test binary works
// in as the process that crashes; crashStoreEnv, when set, the store it
// opens (a PostgreSQL URL: a replica that dies), else the directory's
// SQLite file.
const (
	crashChildEnv = "TOOLHOST_JOBS_CRASH_CHILD"
	crashStoreEnv = "TOOLHOST_JOBS_CRASH_STORE"
)

// Fast rescue settings for the replica tests: River hands out a dead
// replica's ticket after replicaRescue, a lease lasts replicaLease.
const (
	replicaRescue = 3 * time.Second
	replicaLease  = time.Second
)

// crashChild is the process that dies: it opens the jobs subsystem on dir
// with two workers, starts two jobs that block (one of a Retryable type),
// queues a third behind them, prints the three ids and waits for SIGKILL.
func crashChild(dir string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	target := os.Getenv(crashStoreEnv)
	if target == "" {
		target = filepath.Join(dir, "toolhost.db")
	}
	st, err := store.Open(ctx, target)
	if err != nil {
		fail(err)
	}
	block := newBlocker()
	svc, err := jobs.Open(ctx, jobs.Config{
		Store: st, DataDir: dir, MaxWorkers: 2, PollInterval: 50 * time.Millisecond,
		Handlers:    map[string]jobs.Handler{"hold": block.handler(false), "hold_retry": block.handler(true), "pdf": stamp()},
		RescueAfter: replicaRescue, LeaseTTL: replicaLease, // used on PostgreSQL only
	})
	if err != nil {
		fail(err)
	}
	var ids []string
	for _, typ := range []string{"hold", "hold_retry"} {
		j, err := svc.Submit(ctx, jobs.Submission{Owner: alice, Type: typ, Input: json.RawMessage(`{}`)})
		if err != nil {
			fail(err)
		}
		ids = append(ids, j.ID)
	}
	<-block.started
	<-block.started
	pdf, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pdf", "letter_3pages.pdf"))
	if err != nil {
		fail(err)
	}
	j, err := svc.Submit(ctx, jobs.Submission{Owner: alice, Type: "pdf", Input: json.RawMessage(`{}`),
		Accept: []string{sniff.PDF}, Files: jobs.Uploads(jobs.Upload{Name: "doc.pdf", Content: bytes.NewReader(pdf)})})
	if err != nil {
		fail(err)
	}
	ids = append(ids, j.ID)
	fmt.Println(strings.Join(ids, " "))
	select {} // until killed
}

// A real crash: a child process running two jobs, with a third queued, is
// killed with SIGKILL. Reopened, the subsystem fails the job that was
// running with worker_crashed, reruns the one of a Retryable type, and runs
// the queued one: nothing is lost.
func TestRestartAfterCrash(t *testing.T) {
	e := newEnv(t)
	ids := crash(t, e, "")
	crashed, retried, queued := ids[0], ids[1], ids[2]

	reran := make(chan string, 4)
	svc := e.open(t, map[string]jobs.Handler{
		"hold": {Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
			reran <- run.JobID
			return nil, nil
		}},
		"hold_retry": quick(),
		"pdf":        stamp(),
	}, nil)

	got := waitState(t, svc, crashed, alice, jobs.Failed)
	if got.Error == nil || got.Error.Code != toolerr.WorkerCrashed || got.Error.Retryable || got.Attempts != 1 {
		t.Fatalf("the crashed job: %+v (error %+v)", got, got.Error)
	}
	got = waitState(t, svc, retried, alice, jobs.Succeeded)
	if got.Attempts != 2 || string(got.Result) != `{"ok":true}` {
		t.Fatalf("the retryable crashed job: %+v", got)
	}
	got = waitState(t, svc, queued, alice, jobs.Succeeded)
	if got.Attempts != 1 {
		t.Fatalf("the queued job: %+v", got)
	}
	readFile(t, svc, queued, "stamped-doc.pdf", alice)
	select {
	case id := <-reran:
		t.Fatalf("the non-retryable crashed job %s ran again", id)
	default:
	}
}

// A replica that dies on a shared PostgreSQL store: a child process
// running two jobs, with a third queued, is killed with SIGKILL, and
// another replica (this process, on the same store and files folder,
// never restarting the dead one) settles every job through River's
// rescuer and the jobs' leases: the running one fails with
// worker_crashed, the Retryable one runs again, the queued one runs.
// None is lost or left running.
func TestReplicaDiesOnPostgres(t *testing.T) {
	e := newEnvOn(t, storetest.Postgres(t))
	ids := crash(t, e, e.db)
	crashed, retried, queued := ids[0], ids[1], ids[2]

	reran := make(chan string, 4)
	svc := e.open(t, map[string]jobs.Handler{
		"hold": {Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
			reran <- run.JobID
			return nil, nil
		}},
		"hold_retry": quick(),
		"pdf":        stamp(),
	}, func(c *jobs.Config) { c.RescueAfter, c.LeaseTTL = replicaRescue, replicaLease })

	got := waitState(t, svc, queued, alice, jobs.Succeeded)
	if got.Attempts != 1 {
		t.Fatalf("the queued job: %+v", got)
	}
	readFile(t, svc, queued, "stamped-doc.pdf", alice)
	got = waitState(t, svc, crashed, alice, jobs.Failed)
	if got.Error == nil || got.Error.Code != toolerr.WorkerCrashed || got.Attempts != 1 {
		t.Fatalf("the crashed job: %+v (error %+v)", got, got.Error)
	}
	got = waitState(t, svc, retried, alice, jobs.Succeeded)
	if got.Attempts != 2 || string(got.Result) != `{"ok":true}` {
		t.Fatalf("the retryable crashed job: %+v", got)
	}
	select {
	case id := <-reran:
		t.Fatalf("the non-retryable crashed job %s ran again", id)
	default:
	}
}

// crash runs crashChild on e (and on the store target, when not "") and
// kills it with SIGKILL once it has started its jobs; it returns the ids
// it printed: the job of type hold, the one of hold_retry, the queued pdf.
func crash(t *testing.T, e *env, target string) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+e.dir, crashStoreEnv+"="+target)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(waitFor):
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	ids := strings.Fields(line)
	if len(ids) != 3 {
		t.Fatalf("the child printed %q; stderr:\n%s", line, stderr.String())
	}
	return ids
}

// Close with running handlers cancels them once its context ends: a
// Retryable job is requeued and runs at the next Open, another fails with
// service_unavailable (which the caller may retry); a queued job waits for
// the next Open.
func TestCloseInterruptsRunning(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		e := newEnvOn(t, backend)
		block := newBlocker()
		svc := e.open(t, map[string]jobs.Handler{
			"hold": block.handler(false), "hold_retry": block.handler(true), "pdf": stamp(),
		}, func(c *jobs.Config) { c.MaxWorkers = 2 })
		plain := submit(t, svc, alice, "hold")
		retryable := submit(t, svc, alice, "hold_retry")
		block.wait(t)
		block.wait(t)
		queued := submit(t, svc, alice, "pdf", upload("doc.pdf", pdfFixture(t)))

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := svc.Close(ctx); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if _, err := svc.Get(context.Background(), plain.ID, alice); !errors.Is(err, jobs.ErrClosed) {
			t.Fatalf("Get after Close: %v", err)
		}
		if _, err := svc.Submit(context.Background(), jobs.Submission{Owner: alice, Type: "pdf", Input: json.RawMessage(`{}`)}); !errors.Is(err, jobs.ErrClosed) {
			t.Fatalf("Submit after Close: %v", err)
		}

		svc = e.open(t, map[string]jobs.Handler{"hold": quick(), "hold_retry": quick(), "pdf": stamp()}, nil)
		got := waitState(t, svc, plain.ID, alice, jobs.Failed)
		if got.Error == nil || got.Error.Code != toolerr.ServiceUnavailable || !got.Error.Retryable {
			t.Fatalf("the interrupted job: %+v (error %+v)", got, got.Error)
		}
		got = waitState(t, svc, retryable.ID, alice, jobs.Succeeded)
		if got.Attempts != 2 {
			t.Fatalf("the interrupted retryable job: %+v", got)
		}
		waitState(t, svc, queued.ID, alice, jobs.Succeeded)
		if _, err := svc.Retry(context.Background(), plain.ID, alice); err != nil {
			t.Fatal(err)
		}
		waitState(t, svc, plain.ID, alice, jobs.Succeeded)
	})
}

// A Retryable job that keeps being interrupted stops after MaxAttempts
// runs.
func TestRetryableGivesUp(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		e := newEnvOn(t, backend)
		var id string
		for range 3 {
			block := newBlocker()
			h := block.handler(true)
			h.MaxAttempts = 2
			svc := e.open(t, map[string]jobs.Handler{"hold": h}, nil)
			if id == "" {
				id = submit(t, svc, alice, "hold").ID
			}
			j, err := svc.Get(context.Background(), id, alice)
			if err != nil {
				t.Fatal(err)
			}
			if j.State == jobs.Failed {
				if j.Attempts != 2 || j.Error.Code != toolerr.ServiceUnavailable {
					t.Fatalf("the job that gave up: %+v (error %+v)", j, j.Error)
				}
				return
			}
			block.wait(t)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := svc.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
		t.Fatal("the job was still rerun after MaxAttempts runs")
	})
}

func TestOpenRefusals(t *testing.T) {
	e := newEnv(t)
	e.open(t, map[string]jobs.Handler{"pdf": stamp()}, nil)
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(e.dir, "toolhost.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := func(context.Context, *jobs.Run) (json.RawMessage, error) { return nil, nil }
	tests := []struct {
		name string
		cfg  jobs.Config
		want error
	}{
		{name: "locked", cfg: jobs.Config{Store: st, DataDir: e.dir}, want: jobs.ErrLocked},
		// FilesDir names the folder the first service holds: on SQLite it
		// is locked to one process whatever the data folder.
		{name: "locked files dir", cfg: jobs.Config{Store: st, DataDir: t.TempDir(), FilesDir: filepath.Join(e.dir, "jobs")}, want: jobs.ErrLocked},
		{name: "no store", cfg: jobs.Config{DataDir: t.TempDir()}, want: jobs.ErrConfig},
		{name: "no data dir", cfg: jobs.Config{Store: st}, want: jobs.ErrConfig},
		{name: "short key", cfg: jobs.Config{Store: st, DataDir: t.TempDir(), SigningKey: []byte("short")}, want: jobs.ErrConfig},
		{name: "bad type name", cfg: jobs.Config{Store: st, DataDir: t.TempDir(),
			Handlers: map[string]jobs.Handler{"PDF!": {Run: run}}}, want: jobs.ErrConfig},
		{name: "handler without Run", cfg: jobs.Config{Store: st, DataDir: t.TempDir(),
			Handlers: map[string]jobs.Handler{"pdf": {}}}, want: jobs.ErrConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, err := jobs.Open(ctx, tt.cfg)
			if err == nil {
				svc.Close(ctx)
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Open: %v, want %v", err, tt.want)
			}
		})
	}
}

// A long job on a live replica is not taken from it: River's rescuer hands
// its ticket out again once it has run longer than RescueAfter, and the
// replica that gets it (this one or the other) finds the job's lease live
// and snoozes the ticket, so the one run goes on and records its outcome
// once, with one attempt. (River's rescuer runs every 30 s, so this test
// takes about that long.)
func TestLeaseKeepsALiveRun(t *testing.T) {
	a := newEnvOn(t, storetest.Postgres(t))
	b := &env{dir: t.TempDir(), db: a.db, clock: a.clock}
	release := make(chan struct{})
	var mu sync.Mutex
	runs := 0
	long := jobs.Handler{Retryable: true, Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
		mu.Lock()
		runs++
		mu.Unlock()
		select {
		case <-release:
			return json.RawMessage(`{"ok":true}`), nil
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}}
	fast := func(c *jobs.Config) { c.RescueAfter, c.LeaseTTL = 2*time.Second, time.Second }
	svcA := a.open(t, map[string]jobs.Handler{"long": long}, fast)
	b.open(t, map[string]jobs.Handler{"long": long}, fast)
	j, err := svcA.Submit(context.Background(), jobs.Submission{Owner: alice, Type: "long", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, svcA, j.ID, alice, jobs.Running)

	st, err := store.Open(context.Background(), a.db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rescued := func() int {
		var n int
		if err := st.ReadDB().QueryRow(`SELECT coalesce(array_length(r.errors, 1), 0) FROM river_job r
			JOIN jobs j ON j.ticket = r.id WHERE j.id = ?`, j.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	deadline := time.Now().Add(waitFor)
	for rescued() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("River's rescuer never handed the running ticket out again")
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The ticket is delivered again (about a second after the rescue)
	// and snoozed; the run goes on.
	time.Sleep(3 * time.Second)
	if got, _ := svcA.Get(context.Background(), j.ID, alice); got.State != jobs.Running || got.Attempts != 1 {
		t.Fatalf("after the rescue: %+v", got)
	}
	close(release)
	got := waitState(t, svcA, j.ID, alice, jobs.Succeeded)
	mu.Lock()
	defer mu.Unlock()
	if got.Attempts != 1 || runs != 1 || string(got.Result) != `{"ok":true}` {
		t.Fatalf("the job %+v ran %d times", got, runs)
	}
}
