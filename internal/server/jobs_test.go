package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/engines"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/supervisor"
	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/testkit/contractstest"
	"github.com/toolhost/toolhost/internal/wire"
)

// clock is a movable clock for file expiry and signed URLs.
type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// part is one part of a multipart body: a field when file is false.
type part struct {
	name    string
	content []byte
	file    bool
}

// doMultipart sends a multipart/form-data body of parts.
func (r *rig) doMultipart(path, token string, parts ...part) (int, http.Header, []byte) {
	r.t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range parts {
		var pw interface{ Write([]byte) (int, error) }
		var err error
		if p.file {
			pw, err = w.CreateFormFile(p.name, p.name+".upload")
		} else {
			pw, err = w.CreateFormField(p.name)
		}
		if err != nil {
			r.t.Fatal(err)
		}
		if _, err := pw.Write(p.content); err != nil {
			r.t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		r.t.Fatal(err)
	}
	req, err := http.NewRequest("POST", r.url+path, &buf)
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	if _, err := out.ReadFrom(resp.Body); err != nil {
		r.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, out.Bytes()
}

// jobDoc is the part of tools.job@1 the tests read.
type jobDoc struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Tool     string         `json:"tool"`
	State    string         `json:"state"`
	Progress int            `json:"progress"`
	Result   map[string]any `json:"result"`
	Error    *struct {
		Code string `json:"code"`
	} `json:"error"`
	Files []struct {
		Name    string `json:"name"`
		Type    string `json:"type"`
		Bytes   int64  `json:"bytes"`
		Owner   string `json:"owner"`
		Expires string `json:"expires"`
		URL     string `json:"url"`
		Expired bool   `json:"expired"`
	} `json:"files"`
	Attempts   int              `json:"attempts"`
	References []map[string]any `json:"references"`
}

// checkContract decodes body and checks it against contract.
func checkContract(t *testing.T, contract string, body []byte) {
	t.Helper()
	doc, err := wire.Decode(body, wire.Limits{MaxDepth: 128})
	if err != nil {
		t.Fatalf("%s: %v in %s", contract, err, body)
	}
	if err := contracts.Validate(contract, doc); err != nil {
		t.Errorf("%s fails its contract: %v\n%s", contract, err, body)
	}
}

// job GETs job id with token, checks it against tools.job@1 and decodes it.
func (r *rig) job(id, token string) jobDoc {
	r.t.Helper()
	status, _, body := r.do("GET", "/api/v1/jobs/"+id, token, nil)
	if status != http.StatusOK {
		r.t.Fatalf("GET job %s: %d %s", id, status, body)
	}
	checkContract(r.t, contracts.JobV1, body)
	var d jobDoc
	if err := json.Unmarshal(body, &d); err != nil {
		r.t.Fatal(err)
	}
	return d
}

// final polls job id until it has a final state.
func (r *rig) final(id string) jobDoc {
	r.t.Helper()
	var d jobDoc
	eventually(r.t, "job "+id+" finishes", func() bool {
		d = r.job(id, r.token)
		return d.State == "succeeded" || d.State == "failed" || d.State == "cancelled"
	})
	return d
}

// retryBusy sends a request again, a few times, while the job store
// answers busy (503 tools.store.busy: nothing was changed), as a client
// honouring Retry-After does: under -race on a loaded machine, River's
// writes can outwait a request's store budget.
func (r *rig) retryBusy(send func() (int, http.Header, []byte)) (int, http.Header, []byte) {
	r.t.Helper()
	for i := 0; ; i++ {
		status, h, body := send()
		if status != http.StatusServiceUnavailable || !bytes.Contains(body, []byte(`"code":"tools.store.busy"`)) || i == 4 {
			return status, h, body
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// sse reads the event stream of job id to its end: the event names and
// their data.
func (r *rig) sse(id string) (kinds []string, data []json.RawMessage) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", r.url+"/api/v1/jobs/"+id+"/events", nil)
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := r.client.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		r.t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if k, ok := strings.CutPrefix(line, "event: "); ok {
			kinds = append(kinds, k)
		} else if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = append(data, json.RawMessage(d))
		}
	}
	if err := sc.Err(); err != nil {
		r.t.Fatalf("events: %v", err)
	}
	return kinds, data
}

// problemCode checks that a refusal is a problem document with status and
// code.
func problemCode(t *testing.T, name string, status int, h http.Header, body []byte, wantStatus int, wantCode string) {
	t.Helper()
	var p struct {
		Code   string `json:"code"`
		Status int    `json:"status"`
		Type   string `json:"type"`
	}
	if err := json.Unmarshal(body, &p); err != nil || !strings.Contains(h.Get("Content-Type"), "application/problem+json") {
		t.Errorf("%s: %d %s is not a problem document", name, status, body)
		return
	}
	if status != wantStatus || p.Code != wantCode || p.Status != wantStatus || p.Type == "" {
		t.Errorf("%s: %d %s, want %d %s", name, status, body, wantStatus, wantCode)
	}
	if strings.HasPrefix(wantCode, "tools.run.") || strings.HasPrefix(wantCode, "tools.tool.") || strings.HasPrefix(wantCode, "tools.caller.") {
		doc, _ := wire.Decode(body, wire.Limits{})
		if err := contracts.ValidateProblem(doc); err != nil {
			t.Errorf("%s: not a run-request problem: %v", name, err)
		}
	}
}

func readPDF(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testkit.Root(), "testdata", "pdf", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Job tools end to end (ADR-027): a PDF protected by a job run (multipart),
// answered 202 and then finished (poll and events) or 200; its file
// downloaded by its owner and through a signed URL, refused to another
// caller and after expiry; a reference from one job's output to the next
// job's input; pdf_to_image's pages as files; retry, cancel and every
// refusal of the jobs routes.
func TestJobTools(t *testing.T) {
	clk := &clock{}
	r := startConfigured(t, nil, true, func(c *server.Config) {
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond, FileTTL: time.Hour, Now: clk.Now}
	})
	ctx := context.Background()
	bob, err := r.srv.Accounts().CreateToken(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	letter := readPDF(t, "letter_3pages.pdf")
	protectInput := []byte(`{"user_password":"open sesame","owner_password":"owner secret"}`)

	// A run that waits: 200 with the finished run, or 202 when slow.
	status, h, body := r.doMultipart("/api/v1/tools/pdf_protect/run", r.token,
		part{name: "input", content: protectInput}, part{name: "wait_ms", content: []byte("30000")},
		part{name: "file", content: letter, file: true})
	if status != http.StatusOK && status != http.StatusAccepted {
		t.Fatalf("protect run: %d %s", status, body)
	}
	checkContract(t, contracts.RunV1, body)
	var run contracts.Run
	if err := json.Unmarshal(body, &run); err != nil || run.Job == nil || run.Job.Location != "/api/v1/jobs/"+run.ID {
		t.Fatalf("protect run: %s", body)
	}
	if status == http.StatusAccepted && h.Get("Location") != run.Job.Location {
		t.Errorf("202 Location %q", h.Get("Location"))
	}
	t.Logf("protect run: %d %s", status, body)
	job := r.final(run.ID)
	if job.State != "succeeded" || job.Tool != "pdf_protect" || job.Type != "pdf" || job.Progress != 100 ||
		len(job.Files) != 1 || job.Files[0].Name != "file.pdf" || job.Files[0].Type != "application/pdf" ||
		job.Result["file"] != "file.pdf" || job.Attempts != 1 {
		t.Fatalf("protect job %+v", job)
	}
	if status == http.StatusOK {
		var jobFiles []contracts.File
		for _, f := range job.Files {
			jobFiles = append(jobFiles, contracts.File{Name: f.Name, Owner: f.Owner, Expires: f.Expires})
		}
		if f := contractstest.CheckRun(run, jobFiles); len(f) != 0 || run.Status != contracts.RunSucceeded {
			t.Errorf("run %s: %v", body, f)
		}
	}

	// The owner downloads it, and qpdf confirms it needs the password.
	status, h, protected := r.do("GET", "/api/v1/jobs/"+run.ID+"/files/file.pdf", r.token, nil)
	if status != http.StatusOK || h.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(protected, []byte("%PDF")) {
		t.Fatalf("owner download: %d %s", status, h)
	}
	path := filepath.Join(t.TempDir(), "protected.pdf")
	if err := os.WriteFile(path, protected, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("qpdf", "--requires-password", path).Run(); err != nil {
		t.Errorf("qpdf --requires-password: %v (want exit 0)", err)
	}
	// Another caller is refused the job and the file, as if neither existed.
	status, h, body = r.do("GET", "/api/v1/jobs/"+run.ID, bob, nil)
	problemCode(t, "another caller's job", status, h, body, http.StatusNotFound, "tools.job.not_found")
	status, h, body = r.do("GET", "/api/v1/jobs/"+run.ID+"/files/file.pdf", bob, nil)
	problemCode(t, "another caller's file", status, h, body, http.StatusNotFound, "tools.job.not_found")
	// The signed URL works without a token; changed, it does not.
	signed := job.Files[0].URL
	status, _, body = r.do("GET", signed, "", nil)
	if status != http.StatusOK || !bytes.Equal(body, protected) {
		t.Errorf("signed download: %d", status)
	}
	status, h, body = r.do("GET", strings.Replace(signed, "sig=", "sig=x", 1), "", nil)
	problemCode(t, "altered signature", status, h, body, http.StatusForbidden, "tools.job.signature_invalid")

	// A run that does not wait answers 202 (or 200 if the job was quick);
	// its events end with the final state.
	status, h, body = r.doMultipart("/api/v1/tools/pdf_protect/run", r.token,
		part{name: "input", content: protectInput}, part{name: "wait_ms", content: []byte("0")},
		part{name: "file", content: letter, file: true})
	checkContract(t, contracts.RunV1, body)
	if err := json.Unmarshal(body, &run); err != nil {
		t.Fatal(err)
	}
	if status == http.StatusAccepted {
		if h.Get("Location") != "/api/v1/jobs/"+run.ID || (run.Status != contracts.RunQueued && run.Status != contracts.RunRunning) {
			t.Errorf("202: %s %s", h.Get("Location"), body)
		}
	} else if status != http.StatusOK {
		t.Fatalf("protect run without waiting: %d %s", status, body)
	}
	t.Logf("run without waiting: %d", status)
	kinds, data := r.sse(run.ID)
	t.Logf("events %v", kinds)
	if len(kinds) == 0 || kinds[0] != "state" || kinds[len(kinds)-1] != "state" || len(data) != len(kinds) {
		t.Fatalf("events %v", kinds)
	}
	for i, k := range kinds {
		if k == "state" {
			checkContract(t, contracts.JobV1, data[i])
		}
	}
	var last jobDoc
	if err := json.Unmarshal(data[len(data)-1], &last); err != nil || last.State != "succeeded" || len(last.Files) != 1 {
		t.Errorf("last event %s", data[len(data)-1])
	}

	// A reference from the first job's output to a new job's input: the
	// file reaches the tool without a download. pdf_to_image opens the
	// encrypted PDF with the user password the job passes and renders its
	// pages — which is the proof that the referenced bytes were the ones it
	// got.
	status, h, body = r.do("POST", "/api/v1/jobs", r.token, []byte(`{"type":"pdf","input":{"tool":"render","dpi":36,"password":"open sesame"},"references":[{"name":"file","job":"`+job.ID+`","file":"file.pdf"}]}`))
	if status != http.StatusAccepted || h.Get("Location") == "" {
		t.Fatalf("referencing job: %d %s", status, body)
	}
	checkContract(t, contracts.JobV1, body)
	var ref jobDoc
	_ = json.Unmarshal(body, &ref)
	ref = r.final(ref.ID)
	if ref.State != "succeeded" || ref.Error != nil || ref.Tool != "pdf_to_image" || len(ref.Files) != 3 ||
		len(ref.References) != 1 || ref.References[0]["job"] != job.ID {
		t.Fatalf("referencing job %+v", ref)
	}
	for _, f := range ref.Files {
		status, _, b := r.do("GET", "/api/v1/jobs/"+ref.ID+"/files/"+f.Name, r.token, nil)
		if status != http.StatusOK || f.Type != "image/png" {
			t.Errorf("page file %s (%s): %d", f.Name, f.Type, status)
			continue
		}
		if cfg, err := png.DecodeConfig(bytes.NewReader(b)); err != nil || cfg.Width != 306 || cfg.Height != 396 {
			t.Errorf("page file %s: %d×%d PNG, %v; want 306×396", f.Name, cfg.Width, cfg.Height, err)
		}
	}
	// Without the password the same reference fails with the tool's own
	// error. Retry runs it again (and it fails again); retrying a succeeded
	// job or cancelling it is refused.
	status, _, body = r.do("POST", "/api/v1/jobs", r.token, []byte(`{"type":"pdf","input":{"tool":"render"},"references":[{"name":"file","job":"`+job.ID+`","file":"file.pdf"}]}`))
	if status != http.StatusAccepted {
		t.Fatalf("referencing job without the password: %d %s", status, body)
	}
	_ = json.Unmarshal(body, &ref)
	if ref = r.final(ref.ID); ref.State != "failed" || ref.Error == nil || ref.Error.Code != "invalid_parameters" {
		t.Errorf("referencing job without the password %+v", ref)
	}
	status, _, body = r.do("POST", "/api/v1/jobs/"+ref.ID+"/retry", r.token, nil)
	if status != http.StatusOK {
		t.Fatalf("retry: %d %s", status, body)
	}
	checkContract(t, contracts.JobV1, body)
	if ref = r.final(ref.ID); ref.State != "failed" || ref.Attempts != 2 {
		t.Errorf("retried job %+v", ref)
	}
	status, h, body = r.do("POST", "/api/v1/jobs/"+job.ID+"/retry", r.token, nil)
	problemCode(t, "retry of a succeeded job", status, h, body, http.StatusConflict, "tools.job.state_conflict")
	status, h, body = r.do("POST", "/api/v1/jobs/"+job.ID+"/cancel", r.token, nil)
	problemCode(t, "cancel of a succeeded job", status, h, body, http.StatusConflict, "tools.job.state_conflict")

	// Cancel right after submitting: the job ends cancelled, unless it had
	// already finished (then cancel is refused with a conflict).
	status, _, body = r.doMultipart("/api/v1/tools/pdf_to_image/run", r.token,
		part{name: "input", content: []byte(`{"dpi":300}`)}, part{name: "wait_ms", content: []byte("0")},
		part{name: "file", content: readPDF(t, "noise_8pages.pdf"), file: true})
	if err := json.Unmarshal(body, &run); err != nil || (status != http.StatusAccepted && status != http.StatusOK) {
		t.Fatalf("render run: %d %s", status, body)
	}
	status, _, body = r.retryBusy(func() (int, http.Header, []byte) {
		return r.do("POST", "/api/v1/jobs/"+run.ID+"/cancel", r.token, nil)
	})
	switch status {
	case http.StatusOK:
		checkContract(t, contracts.JobV1, body)
		if d := r.final(run.ID); d.State != "cancelled" && d.State != "succeeded" && d.State != "failed" {
			t.Errorf("cancelled job %+v", d)
		} else if d.State == "cancelled" && (d.Error == nil || len(d.Files) != 0) {
			t.Errorf("cancelled job %+v", d)
		}
	case http.StatusConflict:
	default:
		t.Errorf("cancel: %d %s", status, body)
	}

	// pdf_to_image through POST /jobs (multipart): its pages are files.
	status, _, body = r.doMultipart("/api/v1/jobs", r.token,
		part{name: "job", content: []byte(`{"type":"pdf","input":{"tool":"render","dpi":36,"first_page":1,"last_page":2}}`)},
		part{name: "file", content: letter, file: true})
	if status != http.StatusAccepted {
		t.Fatalf("render job: %d %s", status, body)
	}
	var render jobDoc
	_ = json.Unmarshal(body, &render)
	render = r.final(render.ID)
	if render.State != "succeeded" || len(render.Files) != 2 || render.Files[0].Name != "pages-0-png.png" ||
		render.Files[1].Name != "pages-1-png.png" || render.Files[0].Type != "image/png" {
		t.Fatalf("render job %+v, error %+v", render, render.Error)
	}
	if pages, _ := render.Result["pages"].([]any); len(pages) != 2 || pages[0].(map[string]any)["png"] != "pages-0-png.png" {
		t.Errorf("render result %v", render.Result)
	}

	// The refusals of the jobs routes, each a problem with its code.
	notPDF := []byte("just some text, not a PDF at all\n")
	refusals := []struct {
		name   string
		send   func() (int, http.Header, []byte)
		status int
		code   string
	}{
		{"anonymous job", func() (int, http.Header, []byte) {
			return r.do("POST", "/api/v1/jobs", "", []byte(`{"type":"pdf","input":{"tool":"render"}}`))
		}, http.StatusUnauthorized, contracts.ProblemUnauthenticated},
		{"anonymous run", func() (int, http.Header, []byte) {
			return r.doMultipart("/api/v1/tools/pdf_protect/run", "", part{name: "input", content: protectInput}, part{name: "file", content: letter, file: true})
		}, http.StatusUnauthorized, contracts.ProblemUnauthenticated},
		{"invalid input of a job tool", func() (int, http.Header, []byte) {
			return r.doMultipart("/api/v1/tools/pdf_protect/run", r.token, part{name: "input", content: []byte(`{"user_password":"x"}`)},
				part{name: "file", content: letter, file: true})
		}, http.StatusUnprocessableEntity, contracts.ProblemInvalidInput},
		{"invalid input of a job", func() (int, http.Header, []byte) {
			return r.do("POST", "/api/v1/jobs", r.token, []byte(`{"type":"pdf","input":{"tool":"render","dpi":7}}`))
		}, http.StatusUnprocessableEntity, contracts.ProblemInvalidInput},
		{"unknown job type", func() (int, http.Header, []byte) {
			return r.do("POST", "/api/v1/jobs", r.token, []byte(`{"type":"nope","input":{"tool":"render"}}`))
		}, http.StatusNotFound, contracts.ProblemToolNotFound},
		{"not JSON", func() (int, http.Header, []byte) {
			return r.do("POST", "/api/v1/jobs", r.token, []byte(`{"type":`))
		}, http.StatusBadRequest, contracts.ProblemInvalidRequest},
		{"not a job", func() (int, http.Header, []byte) {
			return r.do("POST", "/api/v1/jobs", r.token, []byte(`{"type":"pdf","input":[]}`))
		}, http.StatusBadRequest, contracts.ProblemInvalidRequest},
		{"not a PDF", func() (int, http.Header, []byte) {
			return r.doMultipart("/api/v1/jobs", r.token, part{name: "job", content: []byte(`{"type":"pdf","input":{"tool":"render"}}`)},
				part{name: "file", content: notPDF, file: true})
		}, http.StatusUnsupportedMediaType, contracts.ProblemFileType},
		{"a part the tool does not take", func() (int, http.Header, []byte) {
			return r.doMultipart("/api/v1/tools/pdf_to_image/run", r.token, part{name: "input", content: []byte(`{}`)},
				part{name: "other", content: letter, file: true})
		}, http.StatusUnsupportedMediaType, contracts.ProblemFileType},
		{"file too large", func() (int, http.Header, []byte) {
			// Over pdf_to_image's 20 MiB (pdf.MaxRenderFileBytes).
			big := append(bytes.Clone(letter), bytes.Repeat([]byte("%"), 20<<20)...)
			return r.doMultipart("/api/v1/jobs", r.token, part{name: "job", content: []byte(`{"type":"pdf","input":{"tool":"render"}}`)},
				part{name: "file", content: big, file: true})
		}, http.StatusRequestEntityTooLarge, contracts.ProblemPayloadTooLarge},
		{"another caller's file referenced", func() (int, http.Header, []byte) {
			return r.do("POST", "/api/v1/jobs", bob, []byte(`{"type":"pdf","input":{"tool":"render"},"references":[{"name":"file","job":"`+job.ID+`","file":"file.pdf"}]}`))
		}, http.StatusNotFound, contracts.ProblemFileNotFound},
		{"a missing file referenced in a run", func() (int, http.Header, []byte) {
			return r.do("POST", "/api/v1/tools/pdf_to_image/run", r.token, []byte(`{"input":{},"files":[{"name":"file","job":"`+job.ID+`","file":"nope.pdf"}]}`))
		}, http.StatusNotFound, contracts.ProblemFileNotFound},
		{"unsupported media type", func() (int, http.Header, []byte) {
			req, _ := http.NewRequest("POST", r.url+"/api/v1/jobs", strings.NewReader("x"))
			req.Header.Set("Content-Type", "text/plain")
			req.Header.Set("Authorization", "Bearer "+r.token)
			resp, err := r.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var b bytes.Buffer
			_, _ = b.ReadFrom(resp.Body)
			return resp.StatusCode, resp.Header, b.Bytes()
		}, http.StatusUnsupportedMediaType, contracts.ProblemUnsupportedMediaType},
		{"unknown job", func() (int, http.Header, []byte) {
			return r.do("GET", "/api/v1/jobs/nope", r.token, nil)
		}, http.StatusNotFound, "tools.job.not_found"},
		{"events of another caller's job", func() (int, http.Header, []byte) {
			return r.do("GET", "/api/v1/jobs/"+job.ID+"/events", bob, nil)
		}, http.StatusNotFound, "tools.job.not_found"},
		{"retry of another caller's job", func() (int, http.Header, []byte) {
			return r.do("POST", "/api/v1/jobs/"+ref.ID+"/retry", bob, nil)
		}, http.StatusNotFound, "tools.job.not_found"},
	}
	for _, tt := range refusals {
		status, h, body := tt.send()
		problemCode(t, tt.name, status, h, body, tt.status, tt.code)
	}

	// After the files' expiry, the owner and the signed URL are refused.
	clk.advance(2 * time.Hour)
	status, _, body = r.do("GET", "/api/v1/jobs/"+job.ID+"/files/file.pdf", r.token, nil)
	if status != http.StatusGone && status != http.StatusNotFound {
		t.Errorf("owner download after expiry: %d %s", status, body)
	}
	status, _, body = r.do("GET", signed, "", nil)
	if status != http.StatusGone && status != http.StatusNotFound {
		t.Errorf("signed download after expiry: %d %s", status, body)
	}
}

// The legacy /api/process route reaches the job tools: an upload form
// with the "tool" selector runs a job and answers {success, download}
// with a signed URL, with the deprecation headers.
func TestLegacyJobTools(t *testing.T) {
	r := startConfigured(t, nil, true, func(c *server.Config) {
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
	})
	letter := readPDF(t, "letter_3pages.pdf")
	status, h, body := r.doMultipart("/api/process", r.token,
		part{name: "tool", content: []byte("protect-pdf")},
		part{name: "user_password", content: []byte("open sesame")},
		part{name: "owner_password", content: []byte("owner secret")},
		part{name: "file", content: letter, file: true})
	if h.Get("Deprecation") != "true" || h.Get("Sunset") == "" || h.Get("Link") != `</api/v1/tools/pdf_protect/run>; rel="successor-version"` {
		t.Errorf("headers %v", h)
	}
	var a struct {
		Success  bool   `json:"success"`
		Download string `json:"download"`
		Job      string `json:"job"`
		Status   string `json:"status"`
	}
	if err := json.Unmarshal(body, &a); err != nil || !a.Success {
		t.Fatalf("legacy protect: %d %s", status, body)
	}
	if status == http.StatusAccepted {
		if d := r.final(a.Job); d.State != "succeeded" || len(d.Files) != 1 {
			t.Fatalf("legacy job %+v", d)
		} else {
			a.Download = d.Files[0].URL
		}
	} else if status != http.StatusOK || a.Status != "succeeded" || a.Download == "" {
		t.Fatalf("legacy protect: %d %s", status, body)
	}
	status, _, pdf := r.do("GET", a.Download, "", nil)
	if status != http.StatusOK || !bytes.HasPrefix(pdf, []byte("%PDF")) {
		t.Errorf("legacy download: %d", status)
	}

	// Anonymous callers are refused, as by the run route.
	status, h, body = r.doMultipart("/api/process", "",
		part{name: "tool", content: []byte("pdf-to-image")}, part{name: "file", content: letter, file: true})
	problemCode(t, "anonymous legacy job", status, h, body, http.StatusUnauthorized, contracts.ProblemUnauthenticated)
	if h.Get("Deprecation") != "true" {
		t.Errorf("refusal headers %v", h)
	}
}

// The signing key is made once, readable by its owner alone, and kept
// across a restart on the same data folder: a finished job, its file and
// the signed URL given out before the restart all outlive the process.
func TestJobsAcrossRestart(t *testing.T) {
	data := t.TempDir()
	configure := func(c *server.Config) {
		c.DataDir = data
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
	}
	first := &rig{t: t, client: &http.Client{Timeout: 70 * time.Second}}
	srv, url := serve(t, configure)
	first.srv, first.url = srv, url
	var err error
	if first.token, err = srv.Accounts().CreateToken(context.Background(), "alice"); err != nil {
		t.Fatal(err)
	}
	status, _, body := first.doMultipart("/api/v1/tools/pdf_protect/run", first.token,
		part{name: "input", content: []byte(`{"user_password":"a","owner_password":"b"}`)},
		part{name: "file", content: readPDF(t, "letter_3pages.pdf"), file: true})
	var run contracts.Run
	if err := json.Unmarshal(body, &run); err != nil || (status != http.StatusOK && status != http.StatusAccepted) {
		t.Fatalf("run: %d %s", status, body)
	}
	job := first.final(run.ID)
	if job.State != "succeeded" || len(job.Files) != 1 {
		t.Fatalf("job %+v", job)
	}
	keyPath := filepath.Join(data, server.SigningKeyFile)
	fi, err := os.Stat(keyPath)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 32 {
		t.Fatalf("signing key: %v %v", fi, err)
	}
	key, _ := os.ReadFile(keyPath)
	first.client.CloseIdleConnections()
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	second := &rig{t: t, token: first.token, client: &http.Client{Timeout: 70 * time.Second}}
	second.srv, second.url = serve(t, configure)
	defer second.client.CloseIdleConnections()
	if again, _ := os.ReadFile(keyPath); !bytes.Equal(key, again) {
		t.Errorf("the signing key changed across a restart")
	}
	if d := second.job(run.ID, second.token); d.State != "succeeded" || len(d.Files) != 1 {
		t.Errorf("job after the restart %+v", d)
	}
	status, _, pdf := second.do("GET", job.Files[0].URL, "", nil)
	if status != http.StatusOK || !bytes.HasPrefix(pdf, []byte("%PDF")) {
		t.Errorf("signed URL of the first process: %d", status)
	}
}

// serve starts a server with the native packages, configured by configure,
// on loopback, shut down when the test ends unless the test shuts it down
// first; it returns the server and its base URL.
func serve(t *testing.T, configure func(*server.Config)) (*server.Server, string) {
	t.Helper()
	cfg := server.Config{CacheDir: testkit.CacheDir(), Natives: engines.Packages(),
		Supervisor: supervisor.Config{Executable: os.Args[0], Env: []string{workerEnv + "=1"}},
		Logger:     slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))}
	configure(&cfg)
	srv, err := server.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx) // a second Shutdown after the test's own is harmless
		<-served
	})
	return srv, "http://" + l.Addr().String()
}
