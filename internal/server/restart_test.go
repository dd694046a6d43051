package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/internal/engines"
	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// The sleeper is a test-only native job tool: it sleeps for its input's
// ms, checkpointing, so that a test can hold a job running or queued.
type sleepIn struct {
	Operation string `json:"operation"`
	MS        int    `json:"ms" minimum:"0" maximum:"3000"`
}

type sleepOut struct {
	Slept int `json:"slept"`
}

// testNatives are the native packages of these tests' servers and workers:
// the real ones and the sleeper.
func testNatives() []*native.Package {
	return append(engines.Packages(), sleeper())
}

func sleeper() *native.Package {
	texts := map[string]guest.Text{}
	for _, lang := range []string{"en", "it", "fr", "es"} {
		texts[lang] = guest.Text{Name: "Sleeper", Description: "Sleeps, for tests."}
	}
	decl, err := guest.Package{ContractVersion: "1.0.0", ImplementationVersion: "1.0.0",
		Services: []guest.Declaration{&guest.Service[sleepIn, sleepOut]{
			Code: "sleeper", Name: "Sleeper", Description: "Sleeps, for tests.", Texts: texts,
			Category: "test", IconKey: "sleeper",
			UI:            guest.UI{Kind: "custom", ComponentKey: "sleeper", Version: "1.0.0"},
			Documentation: guest.Documentation{Path: "tools/sleeper", Version: "1.0.0"},
			Operations:    []guest.Operation{{Name: "sleep"}},
			Platform: &guest.Platform{Execution: "job", Job: &guest.Job{Type: "test", Operation: "sleep"},
				RequireCaller: true, QuotaClass: "tools-job", Cost: 1},
			Compute: native.InWorker[sleepIn, sleepOut],
		}}}.Declaration()
	if err != nil {
		panic(err)
	}
	return &native.Package{Name: "sleeper", Declaration: decl, Compute: func(ctx *native.Context, call native.Call) ([]byte, error) {
		var in sleepIn
		if err := json.Unmarshal(call.Parameters, &in); err != nil {
			return nil, toolerr.New(toolerr.InvalidParameters)
		}
		for end := time.Now().Add(time.Duration(in.MS) * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if err := ctx.Checkpoint(); err != nil {
				return nil, err
			}
		}
		return json.Marshal(sleepOut{Slept: in.MS})
	}}
}

// A restart with a job running and one queued: the running one, which the
// shutdown had no time to wait for, is not lost (it ends failed, and can be
// retried), the queued one runs in the next process. (A process killed outright, not shut down, is
// internal/jobs's TestRestartAfterCrash: the running job ends
// worker_crashed.)
func TestJobsRestartWithQueuedAndRunning(t *testing.T) {
	data := t.TempDir()
	configure := func(c *server.Config) {
		c.DataDir = data
		c.Natives = testNatives()
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond, MaxWorkers: 1}
	}
	first := &rig{t: t, client: &http.Client{Timeout: 70 * time.Second}}
	srv, url := serve(t, configure)
	first.srv, first.url = srv, url
	var err error
	if first.token, err = srv.Accounts().CreateToken(context.Background(), "alice"); err != nil {
		t.Fatal(err)
	}
	submit := func(r *rig, ms int) string {
		t.Helper()
		status, _, body := r.do("POST", "/api/v1/jobs", r.token,
			[]byte(`{"type":"test","input":{"tool":"sleep","ms":`+strconv.Itoa(ms)+`}}`))
		var d jobDoc
		if err := json.Unmarshal(body, &d); err != nil || status >= 300 {
			t.Fatalf("submit: %d %s", status, body)
		}
		return d.ID
	}
	running := submit(first, 2000)
	eventually(t, "the first job runs", func() bool { return first.job(running, first.token).State == "running" })
	queued := submit(first, 10)
	if s := first.job(queued, first.token).State; s != "queued" {
		t.Fatalf("second job %s, want queued behind the only worker", s)
	}
	first.client.CloseIdleConnections()
	// A shutdown that cannot wait for the running job: it is interrupted.
	// (Given time, a shutdown lets a running job finish.)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	srv.Shutdown(ctx) // reports the interrupted job

	second := &rig{t: t, token: first.token, client: &http.Client{Timeout: 70 * time.Second}}
	second.srv, second.url = serve(t, configure)
	defer second.client.CloseIdleConnections()
	if d := second.final(queued); d.State != "succeeded" || d.Result["slept"] != float64(10) {
		t.Errorf("the queued job after the restart: %+v", d)
	}
	d := second.final(running)
	if d.State != "failed" || d.Error == nil {
		t.Fatalf("the interrupted job: %+v", d)
	}
	status, _, body := second.do("POST", "/api/v1/jobs/"+running+"/retry", second.token, nil)
	if status >= 300 {
		t.Fatalf("retry of the interrupted job: %d %s", status, body)
	}
	var retried jobDoc
	json.Unmarshal(body, &retried)
	if d := second.final(retried.ID); d.State != "succeeded" {
		t.Errorf("the retried job: %+v", d)
	}
}
