package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/testkit/contractstest"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

// Issue 16, items 2–9: job files, job documents and their events.

// TestRefusedUploadCostsNothing (issue 16, item 5): an upload refused
// before the tool runs (415 tools.run.file_type, on the run route and on
// POST /jobs) spends none of the caller's quota: with an allowance of one
// pdf_protect run, any number of refused uploads leave it whole, the run
// after them is admitted, and only the run after that is refused 429. A
// form without the tool's required file part is refused like a JSON body
// without it (422 tools.run.invalid_input naming "file"), once the form
// has been read, costs nothing either and leaves no job behind.
func TestRefusedUploadCostsNothing(t *testing.T) {
	clock := &guardClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	var cost int
	data := t.TempDir()
	r := startConfigured(t, nil, true, func(c *server.Config) {
		c.DataDir = data
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
		cost = 3 // one run of pdf_protect (cost 2), not two
		tb := guard.DefaultTable()
		cl := tb.Classes[guard.ClassJob]
		cl.User = guard.Allowance{Burst: cost, PerMinute: 1}
		tb.Classes[guard.ClassJob] = cl
		c.Guard = server.GuardConfig{Mode: guard.Enforce, Quotas: &tb, Now: clock.Now}
	})
	var tool struct {
		Cost int `json:"cost"`
	}
	r.getJSON("/api/v1/tools/pdf_protect", &tool)
	if tool.Cost < 1 || tool.Cost > cost || 2*tool.Cost <= cost {
		t.Fatalf("pdf_protect costs %d: the test's allowance of %d is not one run", tool.Cost, cost)
	}
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0}, 64)...)
	input := []byte(`{"user_password":"open sesame","owner_password":"owner secret"}`)
	for i := range 3 {
		status, h, body := r.doMultipart("/api/v1/tools/pdf_protect/run", r.token,
			part{name: "input", content: input}, part{name: "file", content: png, file: true})
		problemCode(t, "a PNG run", status, h, body, http.StatusUnsupportedMediaType, contracts.ProblemFileType)
		status, h, body = r.doMultipart("/api/v1/jobs", r.token,
			part{name: "job", content: []byte(`{"type":"pdf","input":{"tool":"protect","user_password":"a","owner_password":"b"}}`)},
			part{name: "file", content: png, file: true})
		problemCode(t, "a PNG job", status, h, body, http.StatusUnsupportedMediaType, contracts.ProblemFileType)
		status, h, body = r.doMultipart("/api/v1/tools/pdf_protect/run", r.token, part{name: "input", content: input})
		missingFile(t, "a run form without its file", status, h, body)
		status, h, body = r.doMultipart("/api/v1/jobs", r.token,
			part{name: "job", content: []byte(`{"type":"pdf","input":{"tool":"protect","user_password":"a","owner_password":"b"}}`)})
		missingFile(t, "a job form without its file", status, h, body)
		if t.Failed() {
			t.Fatalf("refusal %d", i)
		}
	}
	if n, dirs := jobRows(t, data), jobDirs(t, data); n != 0 || len(dirs) != 0 {
		t.Errorf("the refusals left %d jobs and the folders %v", n, dirs)
	}
	letter := readPDF(t, "letter_3pages.pdf")
	status, _, body := r.doMultipart("/api/v1/tools/pdf_protect/run", r.token,
		part{name: "input", content: input}, part{name: "wait_ms", content: []byte("0")},
		part{name: "file", content: letter, file: true})
	if status != http.StatusOK && status != http.StatusAccepted {
		t.Fatalf("the run after the refusals: %d %s", status, body)
	}
	status, h, body := r.doMultipart("/api/v1/tools/pdf_protect/run", r.token,
		part{name: "input", content: input}, part{name: "wait_ms", content: []byte("0")},
		part{name: "file", content: letter, file: true})
	problemCode(t, "the run over the allowance", status, h, body, http.StatusTooManyRequests, contracts.ProblemQuotaExceeded)
}

// missingFile checks the refusal of a form that did not upload the
// tool's required "file": 422 tools.run.invalid_input with an issue at
// /file, as a JSON body without it gets.
func missingFile(t *testing.T, what string, status int, h http.Header, body []byte) {
	t.Helper()
	problemCode(t, what, status, h, body, http.StatusUnprocessableEntity, contracts.ProblemInvalidInput)
	var p struct {
		Issues []struct {
			Path []any `json:"path"`
		} `json:"issues"`
	}
	if err := json.Unmarshal(body, &p); err != nil || len(p.Issues) == 0 || len(p.Issues[0].Path) == 0 || p.Issues[0].Path[0] != "file" {
		t.Errorf("%s: the issues do not name the file: %s", what, body)
	}
}

// TestRunFilesHaveOwner (issue 16, item 6): the files of a finished job
// run carry their owner, the job's (the caller's principal), as the job
// document's do, and the run answer passes tools.run@1, which requires it.
func TestRunFilesHaveOwner(t *testing.T) {
	r := startConfigured(t, nil, true, func(c *server.Config) {
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
	})
	status, _, body := r.doMultipart("/api/v1/tools/pdf_protect/run", r.token,
		part{name: "input", content: []byte(`{"user_password":"open sesame","owner_password":"owner secret"}`)},
		part{name: "wait_ms", content: []byte("60000")},
		part{name: "file", content: readPDF(t, "letter_3pages.pdf"), file: true})
	if status != http.StatusOK {
		t.Fatalf("run: %d %s", status, body)
	}
	checkContract(t, contracts.RunV1, body)
	var run contracts.Run
	if err := json.Unmarshal(body, &run); err != nil || run.Status != contracts.RunSucceeded || len(run.Files) != 1 {
		t.Fatalf("run: %s", body)
	}
	job := r.job(run.ID, r.token)
	if len(job.Files) != 1 || job.Files[0].Owner == "" || run.Files[0].Owner != job.Files[0].Owner {
		t.Errorf("run file owner %q, job file %+v", run.Files[0].Owner, job.Files)
	}
	var jobFiles []contracts.File
	for _, f := range job.Files {
		jobFiles = append(jobFiles, contracts.File{Name: f.Name, Owner: f.Owner, Expires: f.Expires})
	}
	if f := contractstest.CheckRun(run, jobFiles); len(f) != 0 {
		t.Errorf("CheckRun: %v", f)
	}
}

// TestJobReadableAfterFilesExpire (issue 16, item 4): once a job's files
// have expired, only the files do: the job document still answers 200 with
// its state and result, listing each file as expired with a URL that
// answers 410, and its event stream still gives its final state.
func TestJobReadableAfterFilesExpire(t *testing.T) {
	clk := &clock{}
	r := startConfigured(t, nil, true, func(c *server.Config) {
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond, FileTTL: time.Hour, Now: clk.Now}
	})
	status, _, body := r.doMultipart("/api/v1/tools/pdf_protect/run", r.token,
		part{name: "input", content: []byte(`{"user_password":"open sesame","owner_password":"owner secret"}`)},
		part{name: "wait_ms", content: []byte("0")},
		part{name: "file", content: readPDF(t, "letter_3pages.pdf"), file: true})
	var run contracts.Run
	if err := json.Unmarshal(body, &run); err != nil || (status != http.StatusOK && status != http.StatusAccepted) {
		t.Fatalf("run: %d %s", status, body)
	}
	if d := r.final(run.ID); d.State != "succeeded" || len(d.Files) != 1 || d.Files[0].URL == "" {
		t.Fatalf("job: %+v", d)
	}
	clk.advance(2 * time.Hour)
	d := r.job(run.ID, r.token) // 200 and tools.job@1, or it fails
	if d.State != "succeeded" || d.Result["file"] != "file.pdf" {
		t.Errorf("the job after its files expired: %+v", d)
	}
	for _, f := range d.Files { // none once the sweeper ran
		if !f.Expired || f.URL != "/api/v1/jobs/"+run.ID+"/files/"+f.Name {
			t.Errorf("an expired file: %+v", f)
		}
		status, h, body := r.do("GET", f.URL, r.token, nil)
		problemCode(t, "an expired file's URL", status, h, body, http.StatusGone, "tools.job.expired")
	}
	kinds, data := r.sse(run.ID)
	if len(kinds) == 0 || kinds[len(kinds)-1] != "state" || !bytes.Contains(data[len(data)-1], []byte(`"succeeded"`)) {
		t.Errorf("events after expiry: %v", kinds)
	}
}

// sseEvent is one event of a job's event stream.
type sseEvent struct{ id, kind, data string }

// sseStream reads job id's event stream, sending lastID as Last-Event-ID
// when set, to its end: the status, the retry field, the number of
// heartbeat comments and the events.
func (r *rig) sseStream(id, lastID string) (status int, retry string, heartbeats int, evs []sseEvent) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", r.url+"/api/v1/jobs/"+id+"/events", nil)
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.kind != "" {
				evs = append(evs, ev)
			}
			ev = sseEvent{}
		case line == ": heartbeat":
			heartbeats++
		case strings.HasPrefix(line, "retry: "):
			retry = strings.TrimPrefix(line, "retry: ")
		case strings.HasPrefix(line, "id: "):
			ev.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			ev.kind = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		}
	}
	if err := sc.Err(); err != nil {
		r.t.Errorf("events of %s: %v (after %d events)", id, err, len(evs))
	}
	return resp.StatusCode, retry, heartbeats, evs
}

// TestJobEventsStream (issue 16, item 9): a job's event stream starts with
// retry:, gives every event an id, sends heartbeat comments while nothing
// happens, and stays open past the HTTP server's write timeout (1 s here)
// until the job's final state; a client that reconnects with
// Last-Event-ID is not sent again the states it has, and one that has the
// final state gets 204.
func TestJobEventsStream(t *testing.T) {
	r := startConfigured(t, bundled(t), true, func(c *server.Config) {
		c.Natives = testNatives()
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond, EventsHeartbeat: 100 * time.Millisecond, WriteTimeout: time.Second}
	})
	id := r.submitSleeper(r.token, 2500)
	status, retry, heartbeats, evs := r.sseStream(id, "")
	if status != http.StatusOK || retry == "" || heartbeats == 0 || len(evs) < 2 {
		t.Fatalf("events: %d retry %q, %d heartbeats, %+v", status, retry, heartbeats, evs)
	}
	last := evs[len(evs)-1]
	if last.kind != "state" || !strings.Contains(last.data, `"state":"succeeded"`) {
		t.Fatalf("the stream ended before the final state: %+v", evs)
	}
	ids := map[string]bool{}
	for _, ev := range evs {
		if ev.id == "" || ids[ev.id] {
			t.Errorf("an event without its own id: %+v", ev)
		}
		ids[ev.id] = true
	}
	// Resumed after the first state: that state is not sent again, the
	// final one is.
	first := evs[0]
	status, _, _, resumed := r.sseStream(id, first.id)
	if status != http.StatusOK || len(resumed) == 0 {
		t.Fatalf("resumed after %s: %d %+v", first.id, status, resumed)
	}
	for _, ev := range resumed {
		if ev.id == first.id {
			t.Errorf("resumed after %s, sent it again: %+v", first.id, resumed)
		}
	}
	if ev := resumed[len(resumed)-1]; ev.id != last.id || ev.kind != "state" {
		t.Errorf("resumed stream ends with %+v, want the final state %s", ev, last.id)
	}
	// The client has the final state: nothing more, 204.
	if status, _, _, evs := r.sseStream(id, last.id); status != http.StatusNoContent || len(evs) != 0 {
		t.Errorf("resumed after the final state: %d %+v", status, evs)
	}
}

// TestInlineFilesAreSniffed (issue 16, item 3): a file sent inline, base64
// in the JSON input, is sniffed like an upload: a PNG given as a job tool's
// PDF is refused 415 tools.run.file_type on the jobs route and on the run
// route, a value that is not base64 is 422, and an inline PDF becomes the
// job's input file and is protected.
func TestInlineFilesAreSniffed(t *testing.T) {
	r := startConfigured(t, nil, true, func(c *server.Config) {
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
	})
	png := base64.StdEncoding.EncodeToString(append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0}, 64)...))
	pdf := base64.StdEncoding.EncodeToString(readPDF(t, "letter_3pages.pdf"))
	job := func(file string) []byte {
		return []byte(`{"type":"pdf","input":{"tool":"protect","user_password":"a","owner_password":"b","file":"` + file + `"}}`)
	}
	runReq := func(file string) []byte {
		return []byte(`{"wait_ms":60000,"input":{"user_password":"a","owner_password":"b","file":"` + file + `"}}`)
	}
	status, h, body := r.do("POST", "/api/v1/jobs", r.token, job(png))
	problemCode(t, "an inline PNG job", status, h, body, http.StatusUnsupportedMediaType, contracts.ProblemFileType)
	status, h, body = r.do("POST", "/api/v1/tools/pdf_protect/run", r.token, runReq(png))
	problemCode(t, "an inline PNG run", status, h, body, http.StatusUnsupportedMediaType, contracts.ProblemFileType)
	status, h, body = r.do("POST", "/api/v1/jobs", r.token, job("%%% not base64"))
	problemCode(t, "an inline file that is not base64", status, h, body, http.StatusUnprocessableEntity, contracts.ProblemInvalidInput)

	status, _, body = r.do("POST", "/api/v1/tools/pdf_protect/run", r.token, runReq(pdf))
	var run contracts.Run
	if err := json.Unmarshal(body, &run); err != nil || status != http.StatusOK || run.Status != contracts.RunSucceeded {
		t.Fatalf("an inline PDF run: %d %s", status, body)
	}
	status, _, body = r.do("POST", "/api/v1/jobs", r.token, job(pdf))
	var d jobDoc
	if err := json.Unmarshal(body, &d); err != nil || status != http.StatusAccepted {
		t.Fatalf("an inline PDF job: %d %s", status, body)
	}
	if d = r.final(d.ID); d.State != "succeeded" || len(d.Files) != 1 {
		t.Errorf("the inline PDF job: %+v", d)
	}
	if strings.Contains(string(body), pdf[:64]) {
		t.Errorf("the job document echoes the inline file: %s", body)
	}
}

// TestRunFormsTakeTheSameParts (issue 16, item 8): the run route takes a
// multipart form for a sync tool too ("input", "wait_ms"; a file part is
// 415 tools.run.file_type, since it has no file inputs), and the run and
// jobs routes take the same parts: "input", "references" and the file
// parts (the jobs route with "type", or its whole "job" part as before;
// the run route with "references" as well as the run request's "files").
func TestRunFormsTakeTheSameParts(t *testing.T) {
	r := startConfigured(t, bundled(t), true, func(c *server.Config) {
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
	})
	status, _, body := r.doMultipart("/api/v1/tools/hash/run", r.token,
		part{name: "input", content: []byte(`{"operation":"digest","text":"abc","algorithm":"sha256"}`)}, part{name: "wait_ms", content: []byte("1000")})
	if status != http.StatusOK || !bytes.Contains(body, []byte(`"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"`)) {
		t.Fatalf("a sync run as a form: %d %s", status, body)
	}
	checkContract(t, contracts.RunV1, body)
	status, h, body := r.doMultipart("/api/v1/tools/hash/run", r.token,
		part{name: "input", content: []byte(`{"operation":"digest","text":"abc","algorithm":"sha256"}`)},
		part{name: "file", content: []byte("abc"), file: true})
	problemCode(t, "a file part for a sync tool", status, h, body, http.StatusUnsupportedMediaType, contracts.ProblemFileType)

	// The jobs route with the run route's parts.
	status, _, body = r.doMultipart("/api/v1/jobs", r.token,
		part{name: "type", content: []byte("pdf")},
		part{name: "input", content: []byte(`{"tool":"protect","user_password":"open sesame","owner_password":"owner secret"}`)},
		part{name: "file", content: readPDF(t, "letter_3pages.pdf"), file: true})
	var d jobDoc
	if err := json.Unmarshal(body, &d); err != nil || status != http.StatusAccepted {
		t.Fatalf("a job from parts: %d %s", status, body)
	}
	if d = r.final(d.ID); d.State != "succeeded" || d.Tool != "pdf_protect" {
		t.Fatalf("the job from parts: %+v", d)
	}
	status, h, body = r.doMultipart("/api/v1/jobs", r.token,
		part{name: "job", content: []byte(`{"type":"pdf","input":{"tool":"render"}}`)}, part{name: "type", content: []byte("pdf")})
	problemCode(t, "a job part and a type part", status, h, body, http.StatusBadRequest, contracts.ProblemInvalidRequest)

	// The run route with the jobs route's "references" part.
	status, _, body = r.doMultipart("/api/v1/tools/pdf_to_image/run", r.token,
		part{name: "input", content: []byte(`{"dpi":36,"password":"open sesame"}`)},
		part{name: "references", content: []byte(`[{"name":"file","job":"` + d.ID + `","file":"file.pdf"}]`)},
		part{name: "wait_ms", content: []byte("60000")})
	var run contracts.Run
	if err := json.Unmarshal(body, &run); err != nil || status != http.StatusOK || run.Status != contracts.RunSucceeded || len(run.Files) != 3 {
		t.Fatalf("a run with a references part: %d %s", status, body)
	}
}

// TestJobToolSchemasAreWhatCallersSend (issue 16, item 7): a job tool's
// published input schema (in its descriptor and at /schema) is the input
// an API run sends: no "operation" (the run route names it), no required
// base64 file (the file comes as a part or a reference): the input a
// real pdf_protect run was given validates against it, and the tool's own
// parameters (operation, file) are not required.
func TestJobToolSchemasAreWhatCallersSend(t *testing.T) {
	r := startConfigured(t, nil, true, nil)
	for _, tool := range []string{"pdf_protect", "pdf_to_image"} {
		var desc struct {
			Input map[string]any `json:"input"`
		}
		r.getJSON("/api/v1/tools/"+tool, &desc)
		var doc struct {
			Defs map[string]any `json:"$defs"`
		}
		r.getJSON("/api/v1/tools/"+tool+"/schema", &doc)
		for where, s := range map[string]any{"descriptor": desc.Input, "schema route": doc.Defs["input"]} {
			raw, _ := json.Marshal(s)
			if bytes.Contains(raw, []byte(`"operation"`)) {
				t.Errorf("%s %s: the input schema names operation: %s", tool, where, raw)
			}
			v, err := wire.Decode(raw, wire.Limits{MaxDepth: 128})
			if err != nil {
				t.Fatal(err)
			}
			val, err := schema.Compile(v)
			if err != nil {
				t.Fatalf("%s %s: %v", tool, where, err)
			}
			sent := map[string]any{"pdf_protect": map[string]any{"user_password": "open sesame", "owner_password": "owner secret"},
				"pdf_to_image": map[string]any{}}[tool]
			if err := val.Validate(sent, toolerr.InvalidParameters); err != nil {
				t.Errorf("%s %s: what an API run sends is refused: %v", tool, where, err)
			}
		}
	}
	// That input is what the run route takes.
	status, _, body := r.doMultipart("/api/v1/tools/pdf_protect/run", r.token,
		part{name: "input", content: []byte(`{"user_password":"open sesame","owner_password":"owner secret"}`)},
		part{name: "file", content: readPDF(t, "letter_3pages.pdf"), file: true})
	if status != http.StatusOK && status != http.StatusAccepted {
		t.Errorf("the run: %d %s", status, body)
	}
}

// TestJobSecrets (issue 16, item 2): the PDF passwords of pdf_protect are
// declared writeOnly, reach the tool (the output opens with them), and are
// echoed nowhere — not in the run answer, the job document or its events
// — and stored nowhere in clear: no file of the data folder (the SQLite
// database and its WAL included) holds them, the secrets key is 0600, and
// no sealed secrets are left in the job's folder once it ran.
func TestJobSecrets(t *testing.T) {
	data := t.TempDir()
	r := startConfigured(t, nil, true, func(c *server.Config) {
		c.DataDir = data
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
	})
	var desc struct {
		Input struct {
			Properties map[string]struct {
				WriteOnly bool `json:"writeOnly"`
			} `json:"properties"`
		} `json:"input"`
	}
	r.getJSON("/api/v1/tools/pdf_protect", &desc)
	if !desc.Input.Properties["user_password"].WriteOnly || !desc.Input.Properties["owner_password"].WriteOnly {
		t.Errorf("pdf_protect's passwords are not writeOnly: %+v", desc.Input.Properties)
	}
	const user, owner = "open sesame 7f3a", "owner secret 9c1e"
	status, _, body := r.doMultipart("/api/v1/tools/pdf_protect/run", r.token,
		part{name: "input", content: []byte(`{"user_password":"` + user + `","owner_password":"` + owner + `"}`)},
		part{name: "wait_ms", content: []byte("60000")},
		part{name: "file", content: readPDF(t, "letter_3pages.pdf"), file: true})
	var run contracts.Run
	if err := json.Unmarshal(body, &run); err != nil || status != http.StatusOK || run.Status != contracts.RunSucceeded {
		t.Fatalf("run: %d %s", status, body)
	}
	echoed := func(where string, b []byte) {
		t.Helper()
		if bytes.Contains(b, []byte(user)) || bytes.Contains(b, []byte(owner)) {
			t.Errorf("%s holds a password: %s", where, b)
		}
	}
	echoed("the run answer", body)
	_, _, body = r.do("GET", "/api/v1/jobs/"+run.ID, r.token, nil)
	echoed("the job document", body)
	_, evs := r.sse(run.ID)
	for _, d := range evs {
		echoed("an event", d)
	}
	// The tool had them: the output opens with the user password.
	_, _, pdf := r.do("GET", "/api/v1/jobs/"+run.ID+"/files/file.pdf", r.token, nil)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.pdf"), filepath.Join(dir, "out.pdf")
	if err := os.WriteFile(in, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("qpdf", "--password="+user, "--decrypt", in, out).CombinedOutput(); err != nil {
		t.Errorf("qpdf --decrypt with the user password: %v %s", err, b)
	}
	// Nothing in the data folder holds them in clear.
	err := filepath.WalkDir(data, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil // a file removed meanwhile
		}
		if bytes.Contains(b, []byte(user)) || bytes.Contains(b, []byte(owner)) {
			t.Errorf("%s holds a password in clear", path)
		}
		if d.Name() == "secrets" {
			t.Errorf("%s: the sealed secrets outlived the run", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(data, "jobs", ".secrets-key"))
	if err != nil || st.Mode().Perm() != 0o600 || st.Size() != 32 {
		t.Errorf("the secrets key: %v %v", st, err)
	}
}
