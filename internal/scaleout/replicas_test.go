package scaleout_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"

	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/testkit/redistest"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
)

// anonymousBurst is the anonymous caller's tools-run bucket of the test's
// quota table, refilled at one unit a minute: what 64 clients over three
// replicas may spend together.
const anonymousBurst = 40

// quotaTable overlays the defaults: tools-run's anonymous cell is the
// bucket under test, without a concurrency bound (64 clients at once are
// the point); tools-job's user cell lets twelve jobs of a user run or
// queue at once, and refuses the thirteenth; its session cell lets 16
// browser sessions hold jobs together.
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
  "user": {"burst": 10000, "per_minute": 10000, "concurrent_per_caller": 12},
  "app": {"burst": 60, "per_minute": 12, "concurrent_per_caller": 8},
  "sandbox": {"burst": 3, "per_minute": 1, "concurrent_per_caller": 1, "concurrent_per_tier": 4}}}}`

const hashRun = `{"input":{"operation":"digest","text":"abc","algorithm":"sha256"}}`

// TestThreeReplicas is issues 18's and 27's "Done means" on loopback:
// quotas shared exactly; a job read and downloaded from another replica
// than the one it was submitted to, its events followed and its run
// awaited on every replica; the job slots of one caller and of twenty
// browser sessions freed wherever their jobs end; a concurrency refusal of
// its own; an Idempotency-Key; toolhost jobs and toolhost guard against
// the replicas' stores; a replica SIGKILLed while it runs jobs losing none
// of them and the metrics that follow; PostgreSQL stopped while jobs
// finish losing no outcome and no file; a Redis outage answered without a
// 500, recovered from, and one abuse salt after it.
func TestThreeReplicas(t *testing.T) {
	// A PostgreSQL of the test's own, which it stops and starts (skips,
	// or fails under CI, without Debian's postgresql).
	pg := storetest.StartServer(t)
	// A Redis of the test's own, which it stops and starts again.
	redis := redistest.Start(t)
	for _, p := range []string{"qpdf", "pdftoppm"} {
		if _, err := exec.LookPath(p); err != nil {
			testkit.Missing(t, p+" is not installed: the test's jobs are PDF renders")
		}
	}
	bin := buildToolhost(t)

	tools, files, root := t.TempDir(), t.TempDir(), t.TempDir()
	for name, pkg := range map[string]string{"codec.wasm": "plugins-src/codec", "text.wasm": "plugins-src/text"} {
		if err := os.WriteFile(filepath.Join(tools, name), testkit.Go(t, pkg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	quotas := filepath.Join(root, "quotas.json")
	if err := os.WriteFile(quotas, []byte(quotaTable), 0o644); err != nil {
		t.Fatal(err)
	}
	// The event fallback poll is an hour: the followers of a job run on
	// another replica are told by PostgreSQL's notifications alone.
	common := []string{"--store", pg.URL(), "--redis", redis.URL(), "--files-dir", files,
		"--tools-dir", tools, "--cache-dir", testkit.CacheDir(), "--guard", "enforce", "--quota-table", quotas,
		"--log-format", "json", "--log-level", "warn", "--drain-delay", "0", "--shutdown-timeout", "10s",
		"--job-rescue-after", "6s", "--job-lease", "2s", "--job-event-poll", "1h", "--trusted-proxy", "127.0.0.1/32"}
	token := strings.TrimSpace(runOut(t, bin, "token", "create", "--user", "alice", "--store", pg.URL(), "--data-dir", t.TempDir()))
	carol := strings.TrimSpace(runOut(t, bin, "token", "create", "--user", "carol", "--store", pg.URL(), "--data-dir", t.TempDir()))

	var reps []*replica
	for _, name := range []string{"a", "b", "c"} {
		reps = append(reps, startReplica(t, bin, name, common))
	}
	for _, r := range reps {
		r.waitReady(t, 2*time.Minute)
	}
	a, b, c := reps[0], reps[1], reps[2]
	rdb := redistest.Client(t, redis.URL())

	last := time.Now()
	// step logs how long the steps before it took, for the CI budget.
	step := func(next string) {
		t.Logf("step %s after %.1f s", next, time.Since(last).Seconds())
		last = time.Now()
	}
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

	step("2")
	// 2. A job submitted to A is read, and its file downloaded, from B.
	letter, err := os.ReadFile(filepath.Join(testkit.Root(), "testdata", "pdf", "letter_3pages.pdf"))
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

	step("2b")
	// 2b. A job's events reach its followers on every replica, and a run
	// awaited on any replica is answered when the job ends, wherever it
	// ran: with the fallback poll at an hour, only PostgreSQL's
	// notifications can tell them.
	render := `{"type":"pdf","input":{"tool":"render","dpi":36,"first_page":1,"last_page":1}}`
	for round := range 3 {
		id := reps[round].submit(t, token, render, letter)
		var wg sync.WaitGroup
		for _, r := range reps {
			wg.Go(func() {
				if final := r.follow(t, token, id); final != "succeeded" {
					t.Errorf("the events of job %s on %s ended at %q", id, r.name, final)
				}
			})
		}
		wg.Wait()
	}
	for _, r := range reps {
		status, _, body := r.runForm(t, token, "/api/v1/tools/pdf_to_image/run", `{"dpi":36,"first_page":1,"last_page":1}`, letter, "20000")
		var run struct {
			Status string `json:"status"`
		}
		if status != http.StatusOK || json.Unmarshal(body, &run) != nil || run.Status != "succeeded" {
			t.Errorf("a job tool's run awaited on %s: %d %s", r.name, status, body)
		}
	}

	step("2c")
	// 2c. The same Idempotency-Key from the same owner is one job,
	// whichever replica the retry reaches.
	key := http.Header{"Idempotency-Key": {"retry-after-502-" + strconv.FormatInt(time.Now().UnixNano(), 36)}}
	first := a.submitWith(t, token, render, letter, key)
	if again := b.submitWith(t, token, render, letter, key); again != first {
		t.Errorf("the same Idempotency-Key made jobs %s and %s", first, again)
	}
	a.final(t, token, first, time.Minute)

	step("2d")
	// 2d. Job slots belong to the jobs: thirty single jobs of one caller,
	// submitted to a and run wherever River puts them, leave no slot held;
	// nor do twenty browser sessions' jobs, and the twenty-first session
	// is admitted.
	for i := range 30 {
		id := a.submit(t, carol, render, letter)
		if j := a.final(t, carol, id, time.Minute); j.State != "succeeded" {
			t.Fatalf("carol's job %d: %+v", i, j)
		}
	}
	if n := heldSlots(t, rdb); n != 0 {
		t.Errorf("after thirty single jobs of one caller, %d slots are held", n)
	}
	for i := range 21 {
		browser := http.Header{"Sec-Fetch-Site": {"same-origin"}, "X-Forwarded-For": {"198.51.100." + strconv.Itoa(i+1)}}
		var j jobDoc
		status, h, body := a.send(t, "POST", "/api/v1/jobs", browser, formBody(t, render, letter))
		if status != http.StatusAccepted || json.Unmarshal(body, &j) != nil {
			t.Fatalf("session %d's job: %d %s", i+1, status, body)
		}
		for _, ck := range (&http.Response{Header: h}).Cookies() {
			browser.Add("Cookie", ck.Name+"="+ck.Value)
		}
		if j = a.finalWith(t, browser, j.ID, time.Minute); j.State != "succeeded" {
			t.Fatalf("session %d's job: %+v", i+1, j)
		}
	}
	if n := heldSlots(t, rdb); n != 0 {
		t.Errorf("after 21 browser sessions' jobs, %d slots are held", n)
	}

	step("3")
	// 3. A is SIGKILLed while it runs jobs: every job ends — succeeded,
	// failed with a reason, or run again by B or C — and none is lost.
	noise, err := os.ReadFile(filepath.Join(testkit.Root(), "testdata", "pdf", "noise_8pages.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	slow := `{"type":"pdf","input":{"tool":"render","dpi":150}}`
	// toolhost jobs lists and cancels a job on the replicas' store.
	cancelled := a.submit(t, token, slow, noise)
	if out := runOut(t, bin, "jobs", "list", "--store", pg.URL(), "--data-dir", t.TempDir(), "--json"); !strings.Contains(out, cancelled) {
		t.Errorf("toolhost jobs list does not list %s:\n%s", cancelled, out)
	}
	runOut(t, bin, "jobs", "cancel", cancelled, "--store", pg.URL(), "--redis", redis.URL(), "--data-dir", t.TempDir())
	if j := c.final(t, token, cancelled, time.Minute); j.State != "cancelled" {
		t.Errorf("a job cancelled with toolhost jobs: %+v", j)
	}
	var ids []string
	for range 12 {
		ids = append(ids, a.submit(t, token, slow, noise))
	}
	// The thirteenth is refused for the caller's concurrency, with a code
	// and a RateLimit of its own (not the quota's).
	status, h, body := b.send(t, "POST", "/api/v1/jobs", http.Header{"Authorization": {"Bearer " + token}}, formBody(t, slow, noise))
	if status != http.StatusTooManyRequests || !bytes.Contains(body, []byte(`"tools.caller.concurrency_exceeded"`)) ||
		h.Get("Retry-After") == "" || !strings.Contains(h.Get("RateLimit"), `"concurrency";r=0`) {
		t.Errorf("a thirteenth job of a caller allowed twelve: %d %v %s", status, h, body)
	}
	// toolhost guard shows the caller's twelve slots and frees them.
	aliceKey := callerKey(t, rdb)
	var shown struct {
		Cells []struct {
			Class string            `json:"class"`
			Slots []json.RawMessage `json:"slots"`
		} `json:"cells"`
	}
	out := runOut(t, bin, "guard", "inspect", "--redis", redis.URL(), "--quota-table", quotas, "--json", aliceKey)
	if err := json.Unmarshal([]byte(out), &shown); err != nil || len(shown.Cells) != 1 || shown.Cells[0].Class != "tools-job" ||
		len(shown.Cells[0].Slots) != 12 {
		t.Errorf("toolhost guard inspect %s: %v\n%s", aliceKey, err, out)
	}
	runOut(t, bin, "guard", "reset", "--redis", redis.URL(), "--quota-table", quotas, aliceKey)
	if n := heldSlots(t, rdb); n != 0 {
		t.Errorf("toolhost guard reset left %d slots held", n)
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
	// Until the rescuer settles a's jobs, the metrics count them stalled
	// once their lease (2 s) has run out, not running: running is what b
	// and c run, two each at most.
	time.Sleep(3 * time.Second)
	stalled, live := b.metric(t, `toolhost_jobs{state="stalled"}`), b.metric(t, `toolhost_jobs{state="running"}`)
	t.Logf("kill: 3 s later the metrics count %v jobs stalled, %v running", stalled, live)
	if live > 4 {
		t.Errorf("the metrics after a died with jobs running count %v running, more than b and c run", live)
	}
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
	// The metrics of the replicas left count no job running that is not.
	for _, r := range []*replica{b, c} {
		if n := r.metric(t, `toolhost_jobs{state="running"}`); n != 0 {
			t.Errorf("%s's metrics count %v jobs running after the rescue, and none is", r.name, n)
		}
	}

	step("3b")
	// 3b. PostgreSQL stops for 15 s while jobs finish: no outcome and no
	// file is lost.
	var outage []string
	for i := range 4 {
		outage = append(outage, []*replica{b, c}[i%2].submit(t, token, `{"type":"pdf","input":{"tool":"render","dpi":72}}`, noise))
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if j := b.job(t, token, outage[0]); j.State == "running" || time.Now().After(deadline) {
			break
		}
	}
	pg.Stop()
	time.Sleep(15 * time.Second)
	pg.Start()
	retried := 0
	for _, r := range []*replica{b, c} {
		retried += strings.Count(r.log.String(), "jobs: recording a job's outcome; trying again")
	}
	t.Logf("outage: %d outcomes were written again after the database refused them", retried)
	if retried == 0 {
		t.Errorf("no job ended during the database outage: the test proves nothing (raise the jobs' work)")
	}
	for _, id := range outage {
		j := b.final(t, token, id, 2*time.Minute)
		if j.State != "succeeded" || len(j.Files) != 8 {
			t.Errorf("job %s, finished around a database outage: %+v", id, j)
			continue
		}
		for _, f := range j.Files {
			if status, _, png := c.do(t, "GET", "/api/v1/jobs/"+id+"/files/"+f.Name, token, nil, ""); status != http.StatusOK || !bytes.HasPrefix(png, []byte("\x89PNG")) {
				t.Errorf("job %s's file %s after the outage: %d", id, f.Name, status)
			}
		}
	}

	step("4")
	// 4. Redis stops: enforce answers 503 with Retry-After on runs (never
	// a 500), /readyz is 503, job reads go on; Redis returns: all is back.
	// Before it stops, one address presents a bad token to b and c: the
	// abuse log names it under the day's salt (step 5).
	bad := http.Header{"Authorization": {"Bearer th_not_a_token"}, "X-Forwarded-For": {"203.0.113.9"}}
	for _, r := range []*replica{b, c} {
		if status, _, body := r.send(t, "POST", "/api/v1/tools/hash/run", bad, []byte(hashRun)); status != http.StatusUnauthorized {
			t.Errorf("a bad token on %s: %d %s", r.name, status, body)
		}
	}
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

	step("5")
	// 5. After Redis came back empty, the replicas log the address under
	// the caller they logged it under before — a replica started now too:
	// the salt b and c held is set back, and d takes it rather than
	// making a new one. (A caller is part of a row's key: two callers are
	// two rows, whatever the minute.)
	time.Sleep(11 * time.Second) // a check of the salt (abuse.DefaultSaltCheck, 10 s)
	d := startReplica(t, bin, "d", common)
	// While d's first scan of the tools folder runs, a code it does not
	// know yet is 503 with Retry-After, never 404; once ready, 404.
	loading := 0
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("replica d not ready within 2 minutes:\n%s", tail(d.log.String(), 4000))
		}
		// The code first, readiness after: a 404 is right only once the
		// scan has ended, and then /readyz is 200.
		status, h, err := d.try("GET", "/api/v1/tools/not_yet")
		ready, _, _ := d.try("GET", "/readyz")
		switch {
		case err != nil: // not listening yet
		case status == http.StatusServiceUnavailable && h.Get("Retry-After") != "":
			loading++
		case ready == http.StatusOK && status == http.StatusNotFound:
		default:
			t.Errorf("a code d does not know, while it starts (ready %d): %d %v", ready, status, h)
		}
		if ready == http.StatusOK {
			break
		}
	}
	if status, _, _ := d.try("GET", "/api/v1/tools/not_yet"); status != http.StatusNotFound {
		t.Errorf("an unknown code once d is ready: %d", status)
	}
	t.Logf("d answered 503 for an unknown code %d times while it started", loading)
	for _, r := range []*replica{b, c, d} {
		if status, _, body := r.send(t, "POST", "/api/v1/tools/hash/run", bad, []byte(hashRun)); status != http.StatusUnauthorized {
			t.Errorf("a bad token on %s: %d %s", r.name, status, body)
		}
	}
	callers := abuseCallers(t, pg.URL(), 5)
	step("end")
	if len(callers) != 1 {
		t.Errorf("one address logged by two replicas before and after a Redis restart under %d callers: %v", len(callers), callers)
	}
}

// heldSlots counts the concurrency slots held in Redis now, every
// semaphore's live leases together.
func heldSlots(t *testing.T, rdb goredis.UniversalClient) int {
	t.Helper()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, "toolhost:s:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	n := 0
	for _, k := range keys {
		c, err := rdb.ZCount(ctx, k, "("+now, "+inf").Result()
		if err != nil {
			t.Fatal(err)
		}
		n += int(c)
	}
	return n
}

// callerKey is the caller key of the one user holding job slots now, as
// the guard spells it (p:PRINCIPAL), read from its semaphore's key.
func callerKey(t *testing.T, rdb goredis.UniversalClient) string {
	t.Helper()
	keys, err := rdb.Keys(context.Background(), "toolhost:s:tools-job\x00user\x00*").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("the user slots in Redis: %q, %v", keys, err)
	}
	return keys[0][strings.LastIndexByte(keys[0], 0)+1:]
}

// abuseCallers returns the distinct callers of the unauthenticated
// refusals logged, once they count at least want refusals together (or
// 30 s have passed).
func abuseCallers(t *testing.T, url string, want int) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		rows, err := conn.Query(ctx, `SELECT caller, count FROM abuse_log WHERE reason = 'unauthenticated' AND caller IS NOT NULL`)
		if err != nil {
			t.Fatal(err)
		}
		callers := map[string]int64{}
		var total int64
		for rows.Next() {
			var caller string
			var n int64
			if err := rows.Scan(&caller, &n); err != nil {
				t.Fatal(err)
			}
			callers[caller] += n
			total += n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if total >= int64(want) || time.Now().After(deadline) {
			return callers
		}
	}
}

// buildToolhost builds the toolhost command of this tree once for the
// test.
func buildToolhost(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "toolhost")
	// go test puts its own toolchain's bin first on PATH.
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to build toolhost: %v", err)
	}
	cmd := exec.Command(goCmd, "build", "-o", bin, "./cmd/toolhost")
	cmd.Dir = testkit.Root()
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
	h := http.Header{}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return r.send(t, method, path, h, body)
}

// send sends a request with the headers h (a form's Content-Type among
// them, when body is a form); a transport error is a test error and
// status 0.
func (r *replica) send(t *testing.T, method, path string, h http.Header, body any) (int, http.Header, []byte) {
	var rd io.Reader
	switch b := body.(type) {
	case []byte:
		rd = bytes.NewReader(b)
	case form:
		rd = bytes.NewReader(b.body)
		h = h.Clone()
		h.Set("Content-Type", b.contentType)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, r.url+path, rd)
	if err != nil {
		t.Error(err)
		return 0, nil, nil
	}
	for k, vs := range h {
		req.Header[k] = vs
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

// form is a multipart body and its Content-Type.
type form struct {
	body        []byte
	contentType string
}

// formBody is a job submission's form: the job document and its file.
func formBody(t *testing.T, doc string, file []byte) form {
	return multipartForm(t, map[string]string{"job": doc}, file)
}

// multipartForm is a form of the fields given and a PDF part "file".
func multipartForm(t *testing.T, fields map[string]string, file []byte) form {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		fw, _ := w.CreateFormField(name)
		fw.Write([]byte(fields[name]))
	}
	fw, _ := w.CreateFormFile("file", "file.pdf")
	fw.Write(file)
	w.Close()
	return form{body: buf.Bytes(), contentType: w.FormDataContentType()}
}

// submit posts a job (multipart: the job document and its file) and
// returns its id.
func (r *replica) submit(t *testing.T, token, doc string, file []byte) string {
	t.Helper()
	return r.submitWith(t, token, doc, file, nil)
}

// submitWith is submit with more headers.
func (r *replica) submitWith(t *testing.T, token, doc string, file []byte, more http.Header) string {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer " + token}}
	for k, vs := range more {
		h[k] = vs
	}
	status, _, body := r.send(t, "POST", "/api/v1/jobs", h, formBody(t, doc, file))
	var j jobDoc
	if (status != http.StatusAccepted && status != http.StatusOK) || json.Unmarshal(body, &j) != nil || j.ID == "" {
		t.Fatalf("submit to %s: %d %s", r.name, status, body)
	}
	return j.ID
}

// runForm runs a job tool on path with input, its file and wait_ms, and
// answers what came.
func (r *replica) runForm(t *testing.T, token, path, input string, file []byte, waitMS string) (int, http.Header, []byte) {
	t.Helper()
	return r.send(t, "POST", path, http.Header{"Authorization": {"Bearer " + token}},
		multipartForm(t, map[string]string{"input": input, "wait_ms": waitMS}, file))
}

// follow reads job id's server-sent events until the stream ends and
// returns the state of the last state event ("" for none).
func (r *replica) follow(t *testing.T, token, id string) string {
	req, err := http.NewRequest("GET", r.url+"/api/v1/jobs/"+id+"/events", nil)
	if err != nil {
		t.Error(err)
		return ""
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := r.client.Do(req)
	if err != nil {
		t.Errorf("events of %s on %s: %v", id, r.name, err)
		return ""
	}
	defer resp.Body.Close()
	last := ""
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		var ev struct {
			State string `json:"state"`
		}
		if ok && json.Unmarshal([]byte(strings.TrimSpace(data)), &ev) == nil && ev.State != "" {
			last = ev.State
		}
	}
	return last
}

// try sends a request without a body and answers its status and
// headers, or the transport's error (a replica not listening yet).
func (r *replica) try(method, path string) (int, http.Header, error) {
	req, err := http.NewRequest(method, r.url+path, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header, nil
}

// metric returns the value of the sample named (with its labels) in the
// replica's /metrics; a missing sample fails the test.
func (r *replica) metric(t *testing.T, sample string) float64 {
	t.Helper()
	status, _, body := r.do(t, "GET", "/metrics", "", nil, "")
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), sample+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s on %s: %q", sample, r.name, line)
			}
			return f
		}
	}
	t.Fatalf("%s's /metrics (%d) has no %s", r.name, status, sample)
	return 0
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
	// A store too busy to read the job within the request's budget (three
	// replicas and the other packages' tests on two cores) answers a
	// retryable 503 tools.store.busy with Retry-After: 1; a client
	// retries it, and so does this one, a few times.
	for try := 0; try < 5 && status == http.StatusServiceUnavailable && bytes.Contains(body, []byte(`"tools.store.busy"`)); try++ {
		time.Sleep(time.Second)
		j, status, body = r.read(t, token, id)
	}
	if status != http.StatusOK {
		t.Fatalf("job %s from %s: %d %s", id, r.name, status, body)
	}
	return j
}

// read reads the job once, answering its status and body as they came
// when they are not a job document.
func (r *replica) read(t *testing.T, token, id string) (jobDoc, int, []byte) {
	t.Helper()
	return r.readWith(t, http.Header{"Authorization": {"Bearer " + token}}, id)
}

// readWith is read with the caller's headers h.
func (r *replica) readWith(t *testing.T, h http.Header, id string) (jobDoc, int, []byte) {
	t.Helper()
	status, _, body := r.send(t, "GET", "/api/v1/jobs/"+id, h, nil)
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
	return r.finalWith(t, http.Header{"Authorization": {"Bearer " + token}}, id, within)
}

// finalWith is final with the caller's headers h.
func (r *replica) finalWith(t *testing.T, h http.Header, id string, within time.Duration) jobDoc {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		j, status, body := r.readWith(t, h, id)
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
