package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/server"
)

// jobDropTool is the job tool of testdata/jobtool: its code, its run.job
// and the module's file name in the tools folder.
const (
	jobDropTool = "jobdrop_reverse"
	jobDropType = "drop-test"
	jobDropOp   = "reverse"
	jobDropFile = "jobtool.wasm"
)

// canBuildWasip1 skips the test when this machine cannot build a Go guest
// for wasip1 (no go command, or a toolchain without the port); under CI it
// fails instead, since CI must run it.
func canBuildWasip1(t *testing.T) {
	t.Helper()
	why := ""
	if _, err := exec.LookPath("go"); err != nil {
		why = "no go command on PATH"
	} else if out, err := exec.Command("go", "tool", "dist", "list").Output(); err != nil {
		why = "go tool dist list: " + err.Error()
	} else if !slices.Contains(strings.Fields(string(out)), "wasip1/wasm") {
		why = "the Go toolchain has no wasip1/wasm port"
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("cannot build a Go guest for wasip1: %s", why)
	}
	t.Skipf("cannot build a Go guest for wasip1: %s", why)
}

// A job tool dropped into a running server's tools folder is listed and
// runs, through its run route and through POST /api/v1/jobs, without a
// restart (issue 12, item 4): its job type is resolved against the live
// snapshot at submission and when the job runs. Its type has a hyphen,
// which tools.job@1 allows. Once its module is removed, its type is
// refused at submission, and a job of it retried then fails with
// unknown_tool without running; dropped back, the retry runs it again.
func TestJobDrop(t *testing.T) {
	canBuildWasip1(t)
	wasm := module(t, "testdata/jobtool")
	r := startConfigured(t, nil, false, func(c *server.Config) {
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
	})
	listed := func() bool {
		status, _, _ := r.do("GET", "/api/v1/tools/"+jobDropTool, r.token, nil)
		return status == http.StatusOK
	}
	submitJob := func(text string) (int, http.Header, []byte) {
		return r.do("POST", "/api/v1/jobs", r.token, encode(t, map[string]any{
			"type": jobDropType, "input": map[string]any{"tool": jobDropOp, "text": text}}))
	}

	// Before the drop: neither the tool nor its job type exists.
	if listed() {
		t.Fatal("the job tool is listed before its module is there")
	}
	status, h, body := submitJob("abc")
	problemCode(t, "a job of a type not there yet", status, h, body, http.StatusNotFound, "tools.tool.not_found")

	r.drop(jobDropFile, wasm)
	eventually(t, "the dropped job tool is listed", listed)
	var tool struct {
		ID        string `json:"id"`
		Execution string `json:"execution"`
		Run       struct {
			Job struct {
				Type      string `json:"type"`
				Operation string `json:"operation"`
			} `json:"job"`
		} `json:"run"`
	}
	r.getJSON("/api/v1/tools/"+jobDropTool, &tool)
	if tool.ID != jobDropTool || tool.Execution != "job" || tool.Run.Job.Type != jobDropType || tool.Run.Job.Operation != jobDropOp {
		t.Fatalf("the dropped tool's descriptor: %+v", tool)
	}

	// Its run route: 200 with the finished run, or 202 while it runs.
	const text = "héllo, wörld"
	const want = "dlröw ,olléh"
	status, _, body = r.do("POST", "/api/v1/tools/"+jobDropTool+"/run", r.token,
		[]byte(`{"input":{"text":"`+text+`"},"wait_ms":30000}`))
	if status != http.StatusOK && status != http.StatusAccepted {
		t.Fatalf("run of the dropped job tool: %d %s", status, body)
	}
	checkContract(t, contracts.RunV1, body)
	var run struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &run); err != nil || run.ID == "" {
		t.Fatalf("run of the dropped job tool: %s", body)
	}
	job := r.final(run.ID)
	if job.State != "succeeded" || job.Type != jobDropType || job.Tool != jobDropTool || job.Attempts != 1 ||
		job.Result["reversed"] != want || job.Result["runes"] != float64(len([]rune(want))) || job.Result["file"] != "file.txt" {
		t.Fatalf("the run's job: %+v", job)
	}
	if len(job.Files) != 1 || job.Files[0].Name != "file.txt" || !strings.HasPrefix(job.Files[0].Type, "text/plain") {
		t.Fatalf("the run's files: %+v", job.Files)
	}
	status, _, file := r.do("GET", "/api/v1/jobs/"+run.ID+"/files/file.txt", r.token, nil)
	if status != http.StatusOK || string(file) != want {
		t.Errorf("the run's output file: %d %q, want %q", status, file, want)
	}

	// The jobs route: 202, then the job succeeds.
	status, h, body = submitJob("stressed")
	if status != http.StatusAccepted {
		t.Fatalf("POST /api/v1/jobs of the dropped type: %d %s", status, body)
	}
	checkContract(t, contracts.JobV1, body)
	var submitted jobDoc
	if err := json.Unmarshal(body, &submitted); err != nil || h.Get("Location") != "/api/v1/jobs/"+submitted.ID {
		t.Fatalf("POST /api/v1/jobs: %s %s (%v)", h.Get("Location"), body, err)
	}
	job = r.final(submitted.ID)
	if job.State != "succeeded" || job.Type != jobDropType || job.Result["reversed"] != "desserts" || job.Result["file"] != "file.txt" {
		t.Fatalf("the submitted job: %+v", job)
	}

	// A job that fails on its own (an empty text is the tool's error), to
	// retry once the tool is gone.
	status, _, body = submitJob("")
	if status != http.StatusAccepted {
		t.Fatalf("POST /api/v1/jobs with an empty text: %d %s", status, body)
	}
	if err := json.Unmarshal(body, &submitted); err != nil {
		t.Fatal(err)
	}
	failed := submitted.ID
	if job = r.final(failed); job.State != "failed" || job.Error == nil || job.Error.Code != "execution_failed" || job.Attempts != 1 {
		t.Fatalf("the job with an empty text: %+v %+v", job, job.Error)
	}

	// The module goes: its type is refused, and the retry of a job of it
	// fails with unknown_tool without running (attempts stays 1).
	if err := os.Remove(filepath.Join(r.tools, jobDropFile)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the removed job tool is no longer listed", func() bool { return !listed() })
	status, h, body = submitJob("abc")
	problemCode(t, "a job of a type gone", status, h, body, http.StatusNotFound, "tools.tool.not_found")
	status, _, body = r.do("POST", "/api/v1/jobs/"+failed+"/retry", r.token, nil)
	if status != http.StatusOK {
		t.Fatalf("retry of a job whose tool is gone: %d %s", status, body)
	}
	if job = r.final(failed); job.State != "failed" || job.Error == nil || job.Error.Code != "unknown_tool" || job.Attempts != 1 {
		t.Fatalf("retried job of a tool gone: %+v %+v", job, job.Error)
	}

	// Dropped back, the same retry reaches the tool again.
	r.drop(jobDropFile, wasm)
	eventually(t, "the job tool is listed again", listed)
	status, _, body = r.do("POST", "/api/v1/jobs/"+failed+"/retry", r.token, nil)
	if status != http.StatusOK {
		t.Fatalf("retry once the tool is back: %d %s", status, body)
	}
	if job = r.final(failed); job.State != "failed" || job.Error == nil || job.Error.Code != "execution_failed" || job.Attempts != 2 {
		t.Fatalf("retried job once the tool is back: %+v %+v", job, job.Error)
	}
}
