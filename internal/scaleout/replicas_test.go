package scaleout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/redisconn/redistest"
	"github.com/toolhost/toolhost/internal/store/storetest"
	"github.com/toolhost/toolhost/internal/testmodule"
)

// anonymousBurst is the anonymous caller's tools-run bucket of the test's
// quota table, refilled at one unit a minute: what 64 clients over three
// replicas may spend together.
const anonymousBurst = 40

// quotaTable overlays the defaults: tools-run's anonymous cell is the
// bucket under test, without a concurrency bound (64 clients at once are
// the point); tools-job's user cell lets the test's jobs all queue.
const quotaTable = `{"classes": {
 "tools-run": {
  "anonymous": {"burst": 40, "per_minute": 1},
  "session": {"burst": 120, "per_minute": 60, "concurrent_per_caller": 8},
  "user": {"burst": 300, "per_minute": 150, "concurrent_per_caller": 16},
  "app": {"burst": 600, "per_minute": 300, "concurrent_per_caller": 32},
  "sandbox": {"burst": 30, "per_minute": 10, "concurrent_per_caller": 2}},
 "tools-job": {
  "anonymous": {"burst": 5, "per_minute": 1, "concurrent_per_caller": 1, "concurrent_per_tier": 4},
  "session": {"burst": 10, "per_minute": 2, "concurrent_per_caller": 2, "concurrent_per_tier": 16},
  "user": {"burst": 10000, "per_minute": 10000},
  "app": {"burst": 60, "per_minute": 12, "concurrent_per_caller": 8},
  "sandbox": {"burst": 3, "per_minute": 1, "concurrent_per_caller": 1, "concurrent_per_tier": 4}}}}`

const hashRun = `{"input":{"operation":"digest","text":"abc","algorithm":"sha256"}}`

// TestThreeReplicas is issue 18's "Done means" on loopback: quotas shared
// exactly, a job read and downloaded from another replica than the one it
// was submitted to, a replica SIGKILLed while it runs jobs losing none of
// them, and a Redis outage answered without a 500 and recovered from.
func TestThreeReplicas(t *testing.T) {
	pg := storetest.Postgres(t) // skips (fails under CI) without TOOLHOST_TEST_POSTGRES
	redistest.URL(t)            // the same for TOOLHOST_TEST_REDIS
	// A Redis of the test's own, which it stops and starts again.
	redis := redistest.Start(t)
	for _, p := range []string{"qpdf", "pdftoppm"} {
		if _, err := exec.LookPath(p); err != nil {
			redistest.Missing(t, p+" is not installed: the test's jobs are PDF renders")
		}
	}
	bin := buildToolhost(t)

	tools, files, root := t.TempDir(), t.TempDir(), t.TempDir()
	for name, pkg := range map[string]string{"codec.wasm": "plugins-src/codec", "text.wasm": "plugins-src/text"} {
		if err := os.WriteFile(filepath.Join(tools, name), testmodule.Go(t, pkg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	quotas := filepath.Join(root, "quotas.json")
	if err := os.WriteFile(quotas, []byte(quotaTable), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"--store", pg.Target, "--redis", redis.URL(), "--files-dir", files,
		"--tools-dir", tools, "--cache-dir", testmodule.CacheDir(), "--guard", "enforce", "--quota-table", quotas,
		"--log-format", "json", "--log-level", "warn", "--drain-delay", "0", "--shutdown-timeout", "10s",
		"--job-rescue-after", "6s", "--job-lease", "2s"}
	token := strings.TrimSpace(runOut(t, bin, "token", "create", "--user", "alice", "--store", pg.Target, "--data-dir", t.TempDir()))

	var reps []*replica
	for _, name := range []string{"a", "b", "c"} {
		reps = append(reps, startReplica(t, bin, name, common))
	}
	for _, r := range reps {
		r.waitReady(t, 2*time.Minute)
	}
	a, b, c := reps[0], reps[1], reps[2]

	// 1. 64 parallel clients spread over the replicas, one anonymous
	// caller (127.0.0.1): together they get the bucket, no more.
	var tool struct {
		Cost int `json:"cost"`
	}
	if status, _, body := a.do(t, "GET", "/api/v1/tools/hash", "", nil, ""); status != http.StatusOK || json.Unmarshal(body, &tool) != nil || tool.Cost < 1 {
		t.Fatalf("hash descriptor: %d %s", status, body)
	}
	allowance := anonymousBurst / tool.Cost
	var ok, refused, other atomic.Int64
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			for j := range 2 {
				r := reps[(i*2+j)%3]
				status, h, body := r.do(t, "POST", "/api/v1/tools/hash/run", "", []byte(hashRun), "application/json")
				switch status {
				case http.StatusOK:
					ok.Add(1)
				case http.StatusTooManyRequests:
					refused.Add(1)
					if s, err := strconv.Atoi(h.Get("Retry-After")); err != nil || s < 1 {
						t.Errorf("429 from %s without a Retry-After: %v", r.name, h)
					}
				default:
					other.Add(1)
					t.Errorf("replica %s: %d %s", r.name, status, body)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("quota: %d admitted, %d refused with 429, allowance %d (burst %d, cost %d)", ok.Load(), refused.Load(), allowance, anonymousBurst, tool.Cost)
	if n := int(ok.Load()); n < allowance-len(reps) || n > allowance+len(reps) {
		t.Fatalf("three replicas admitted %d runs of one caller, want its allowance %d ± %d", n, allowance, len(reps))
	}
	if ok.Load()+refused.Load() != 128 || other.Load() != 0 {
		t.Fatalf("%d answers were neither 200 nor 429", other.Load())
	}

	// 2. A job submitted to A is read, and its file downloaded, from B.
	letter, err := os.ReadFile(filepath.Join(testmodule.Root(), "testdata", "pdf", "letter_3pages.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	id := a.submit(t, token, `{"type":"pdf","input":{"tool":"render","dpi":36,"first_page":1,"last_page":1}}`, letter)
	job := b.final(t, token, id, time.Minute)
	if job.State != "succeeded" || len(job.Files) == 0 {
		t.Fatalf("job %s read from b: %+v", id, job)
	}
	status, h, png := b.do(t, "GET", "/api/v1/jobs/"+id+"/files/"+job.Files[0].Name, token, nil, "")
	if status != http.StatusOK || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("the file of a's job from b: %d %v", status, h)
	}

	// 3. A is SIGKILLed while it runs jobs: every job ends — succeeded,
	// failed with a reason, or run again by B or C — and none is lost.
	noise, err := os.ReadFile(filepath.Join(testmodule.Root(), "testdata", "pdf", "noise_8pages.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 12 {
		ids = append(ids, a.submit(t, token, `{"type":"pdf","input":{"tool":"render","dpi":150}}`, noise))
	}
	// Each replica runs two jobs at once (jobs.DefaultMaxWorkers): with
	// five running, A holds at least one.
	running := 0
	deadline := time.Now().Add(time.Minute)
	for running < 5 && time.Now().Before(deadline) {
		running = 0
		for _, id := range ids {
			if b.job(t, token, id).State == "running" {
				running++
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("kill: %d of %d jobs running when a is killed", running, len(ids))
	a.kill(t)
	counts := map[string]int{}
	rerun := 0
	for i, id := range ids {
		r := []*replica{b, c}[i%2]
		j := r.final(t, token, id, 2*time.Minute)
		switch {
		case j.State == "succeeded":
		case j.State == "failed" && j.Error != nil && j.Error.Code != "":
			counts["failed:"+j.Error.Code]++
		default:
			t.Errorf("job %s ended %s without a reason: %+v", id, j.State, j)
		}
		counts[j.State]++
		if j.Attempts > 1 {
			rerun++
		}
	}
	t.Logf("kill: %d jobs: %v, %d run again", len(ids), counts, rerun)
	if running >= 5 && rerun == 0 && counts["failed"] == 0 {
		t.Errorf("a was killed with jobs running, yet none was run again or failed")
	}

	// 4. Redis stops: enforce answers 503 with Retry-After on runs (never
	// a 500), /readyz is 503, job reads go on; Redis returns: all is back.
	redis.Stop()
	for _, r := range []*replica{b, c} {
		for range 3 {
			status, h, body := r.do(t, "POST", "/api/v1/tools/hash/run", "", []byte(hashRun), "application/json")
			if status != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || !bytes.Contains(body, []byte(`"tools.server.unavailable"`)) {
				t.Errorf("%s, Redis down: %d %v %s", r.name, status, h, body)
			}
		}
		if status, _, body := r.do(t, "GET", "/readyz", "", nil, ""); status != http.StatusServiceUnavailable || !bytes.Contains(body, []byte(`"redis"`)) {
			t.Errorf("%s /readyz, Redis down: %d %s", r.name, status, body)
		}
		if status, _, body := r.do(t, "GET", "/api/v1/jobs/"+id, token, nil, ""); status != http.StatusOK {
			t.Errorf("%s job read, Redis down: %d %s", r.name, status, body)
		}
	}
	redis.Start()
	for _, r := range []*replica{b, c} {
		r.waitReady(t, 30*time.Second)
		if status, _, body := r.do(t, "POST", "/api/v1/tools/hash/run", "", []byte(hashRun), "application/json"); status != http.StatusOK {
			t.Errorf("%s after Redis returned: %d %s", r.name, status, body)
		}
	}
}

// buildToolhost builds the toolhost command of this tree once for the
// test.
func buildToolhost(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "toolhost")
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goCmd, "build", "-o", bin, "./cmd/toolhost")
	cmd.Dir = testmodule.Root()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/toolhost: %v\n%s", err, out)
	}
	return bin
}

// runOut runs the command and returns its standard output.
func runOut(t *testing.T, bin string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("toolhost %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// replica is one `toolhost serve` process.
type replica struct {
	name, url string
	cmd       *exec.Cmd
	log       *syncBuffer
	client    *http.Client
	done      chan struct{}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startReplica(t *testing.T, bin, name string, common []string) *replica {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := &replica{name: name, url: "http://" + addr, log: &syncBuffer{}, done: make(chan struct{}),
		client: &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	args := append([]string{"serve", "--addr", addr, "--data-dir", t.TempDir()}, common...)
	r.cmd = exec.Command(bin, args...)
	r.cmd.Stderr = r.log
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.done:
		case <-time.After(20 * time.Second):
			r.kill(t)
		}
		if t.Failed() {
			t.Logf("replica %s's log:\n%s", r.name, tail(r.log.String(), 4000))
		}
	})
	return r
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// kill SIGKILLs the replica's process group (its native workers too) and
// waits for it.
func (r *replica) kill(t *testing.T) {
	syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	<-r.done
}

func (r *replica) waitReady(t *testing.T, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		select {
		case <-r.done:
			t.Fatalf("replica %s exited:\n%s", r.name, tail(r.log.String(), 4000))
		default:
		}
		req, _ := http.NewRequest("GET", r.url+"/readyz", nil)
		if resp, err := r.client.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s not ready within %v:\n%s", r.name, within, tail(r.log.String(), 4000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// do sends a request; a transport error is a test error and status 0.
func (r *replica) do(t *testing.T, method, path, token string, body []byte, contentType string) (int, http.Header, []byte) {
	req, err := http.NewRequestWithContext(context.Background(), method, r.url+path, bytes.NewReader(body))
	if err != nil {
		t.Error(err)
		return 0, nil, nil
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		t.Errorf("%s %s on %s: %v", method, path, r.name, err)
		return 0, nil, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// submit posts a job (multipart: the job document and its file) and
// returns its id.
func (r *replica) submit(t *testing.T, token, doc string, file []byte) string {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	jw, _ := w.CreateFormField("job")
	jw.Write([]byte(doc))
	fw, _ := w.CreateFormFile("file", "file.pdf")
	fw.Write(file)
	w.Close()
	status, _, body := r.do(t, "POST", "/api/v1/jobs", token, buf.Bytes(), w.FormDataContentType())
	var j jobDoc
	if status != http.StatusAccepted || json.Unmarshal(body, &j) != nil || j.ID == "" {
		t.Fatalf("submit to %s: %d %s", r.name, status, body)
	}
	return j.ID
}

// jobDoc is the part of tools.job@1 the test reads.
type jobDoc struct {
	ID       string `json:"id"`
	State    string `json:"state"`
	Attempts int    `json:"attempts"`
	Error    *struct {
		Code string `json:"code"`
	} `json:"error"`
	Files []struct {
		Name string `json:"name"`
	} `json:"files"`
}

func (r *replica) job(t *testing.T, token, id string) jobDoc {
	t.Helper()
	j, status, body := r.read(t, token, id)
	if status != http.StatusOK {
		t.Fatalf("job %s from %s: %d %s", id, r.name, status, body)
	}
	return j
}

// read reads the job once, answering its status and body as they came
// when they are not a job document.
func (r *replica) read(t *testing.T, token, id string) (jobDoc, int, []byte) {
	t.Helper()
	status, _, body := r.do(t, "GET", "/api/v1/jobs/"+id, token, nil, "")
	var j jobDoc
	if status == http.StatusOK && json.Unmarshal(body, &j) != nil {
		return j, 0, body
	}
	return j, status, body
}

// final polls the job until it has ended. A 503 tools.store.busy is the
// store's retryable answer while a connection the kill or the load broke
// is being replaced: it is read again, like a client following the
// answer's Retry-After would.
func (r *replica) final(t *testing.T, token, id string, within time.Duration) jobDoc {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		j, status, body := r.read(t, token, id)
		switch {
		case status == http.StatusServiceUnavailable && bytes.Contains(body, []byte(`"tools.store.busy"`)):
		case status != http.StatusOK:
			t.Fatalf("job %s from %s: %d %s", id, r.name, status, body)
		default:
			switch j.State {
			case "succeeded", "failed", "cancelled":
				return j
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s is still %s after %v (lost?; last answer %d)", id, j.State, within, status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
