package jobs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// TestSecrets (issue 16, item 2): a submission's secret members are kept
// out of the job's row and document, sealed (AES-GCM, the data folder's
// 0600 key) in the job's folder while it is queued — the sealed file does
// not hold them in clear — given back to every run of the job (a Retry
// of a failed or of a cancelled job included), and removed once the job
// has succeeded.
func TestSecrets(t *testing.T) {
	e := newEnv(t)
	block := newBlocker()
	got := make(chan json.RawMessage, 4)
	var runs atomic.Int32
	svc := e.open(t, map[string]jobs.Handler{
		"hold": block.handler(false),
		"pdf": {Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
			got <- run.Input
			if runs.Add(1) == 1 {
				return nil, toolerr.New(toolerr.ExecutionFailed) // the first run fails
			}
			return nil, nil
		}},
	}, func(c *jobs.Config) { c.MaxWorkers = 1 })
	ctx := context.Background()
	const secret = "hunter2-correct-horse"
	sub := func() *jobs.Job {
		t.Helper()
		j, err := svc.Submit(ctx, jobs.Submission{Owner: alice, Type: "pdf",
			Input: json.RawMessage(`{"tool":"protect","user_password":"` + secret + `","keep":1}`), Secrets: []string{"user_password", "absent"}})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	hold := submit(t, svc, alice, "hold")
	block.wait(t)
	queued, cancelled := sub(), sub()
	sealed := filepath.Join(e.dir, "jobs", queued.ID, "secrets")
	b, err := os.ReadFile(sealed)
	if err != nil || len(b) == 0 || bytes.Contains(b, []byte(secret)) {
		t.Fatalf("the sealed secrets of a queued job: %q, %v", b, err)
	}
	if st, err := os.Stat(filepath.Join(e.dir, "jobs", ".secrets-key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the secrets key: %v, %v", st, err)
	}
	for _, j := range []*jobs.Job{queued} {
		if bytes.Contains(j.Input, []byte(secret)) || !bytes.Contains(j.Input, []byte(`"keep"`)) {
			t.Errorf("the submitted job's input: %s", j.Input)
		}
		if g, err := svc.Get(ctx, j.ID, alice); err != nil || bytes.Contains(g.Input, []byte(secret)) {
			t.Errorf("Get: %s, %v", g.Input, err)
		}
	}
	if _, err := svc.Cancel(ctx, cancelled.ID, alice); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Cancel(ctx, hold.ID, alice); err != nil {
		t.Fatal(err)
	}
	wantSecret := func(what string) {
		t.Helper()
		in := <-got
		var m map[string]any
		if err := json.Unmarshal(in, &m); err != nil || m["user_password"] != secret || m["keep"] != float64(1) || m["tool"] != "protect" {
			t.Errorf("%s: the run's input: %s", what, in)
		}
	}
	// Every run of a job gets its secrets, a Retry's too: they stay
	// sealed while the job may run again, and go once it has succeeded.
	wantSecret("the first run")
	waitState(t, svc, queued.ID, alice, jobs.Failed)
	if _, err := os.Stat(sealed); err != nil {
		t.Errorf("a failed job lost its secrets, which its Retry needs: %v", err)
	}
	if _, err := svc.Retry(ctx, queued.ID, alice); err != nil {
		t.Fatal(err)
	}
	wantSecret("a Retry of the failed job")
	waitState(t, svc, queued.ID, alice, jobs.Succeeded)
	if _, err := os.Stat(sealed); !os.IsNotExist(err) {
		t.Errorf("the secrets outlived the job's success: %v", err)
	}
	// A job cancelled while queued never ran; its Retry runs with them.
	if _, err := svc.Retry(ctx, cancelled.ID, alice); err != nil {
		t.Fatal(err)
	}
	wantSecret("a Retry of the cancelled job")
	waitState(t, svc, cancelled.ID, alice, jobs.Succeeded)
	db, _ := os.ReadFile(filepath.Join(e.dir, "toolhost.db"))
	wal, _ := os.ReadFile(filepath.Join(e.dir, "toolhost.db-wal"))
	if bytes.Contains(db, []byte(secret)) || bytes.Contains(wal, []byte(secret)) {
		t.Error("the database holds the secret")
	}
}
