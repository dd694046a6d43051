package server_test

import (
	"bufio"
	"bytes"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/engines/pdf"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/server"
)

// The bounds of multipart bodies (docs/http.md, "Bounded requests"):
// fields and parts are bounded before they are buffered, forms are gated
// per caller and tier before they are read, and uploads must keep
// arriving at the minimum rate.

// formBoundary is the boundary of the forms these tests write by hand.
const formBoundary = "limits-boundary"

// formPart is one part of a generated form: size bytes of 'a' after its
// header lines.
type formPart struct {
	name, filename string
	header         string // extra header lines, each ending in \r\n
	size           int64
	content        string // sent before the size bytes of 'a'
}

// repeatA reads an endless run of 'a'.
type repeatA struct{}

func (repeatA) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// countingReader counts the bytes read from r: what the client managed to
// send.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// form returns a multipart body of parts generated as it is read (nothing
// of it is held in memory) and its length.
func form(parts ...formPart) (io.Reader, int64) {
	var rs []io.Reader
	var n int64
	add := func(r io.Reader, size int64) { rs = append(rs, r); n += size }
	for _, p := range parts {
		disp := fmt.Sprintf("Content-Disposition: form-data; name=%q", p.name)
		if p.filename != "" {
			disp += fmt.Sprintf("; filename=%q", p.filename)
		}
		head := "--" + formBoundary + "\r\n" + disp + "\r\n" + p.header + "\r\n" + p.content
		add(strings.NewReader(head), int64(len(head)))
		add(io.LimitReader(repeatA{}, p.size), p.size)
		add(strings.NewReader("\r\n"), 2)
	}
	tail := "--" + formBoundary + "--\r\n"
	add(strings.NewReader(tail), int64(len(tail)))
	return io.MultiReader(rs...), n
}

// sendForm posts a generated form to path as token (anonymous when empty)
// and returns the answer and how many bytes of the body the client sent
// before the server stopped reading.
func (r *rig) sendForm(path, token string, parts ...formPart) (int, http.Header, []byte, int64) {
	r.t.Helper()
	body, n := form(parts...)
	cr := &countingReader{r: body}
	req, err := http.NewRequest("POST", r.url+path, cr)
	if err != nil {
		r.t.Fatal(err)
	}
	req.ContentLength = n
	req.Header.Set("Content-Type", "multipart/form-data; boundary="+formBoundary)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		r.t.Errorf("POST %s: %v (after sending %d bytes)", path, err, cr.n.Load())
		return 0, nil, nil, cr.n.Load()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Errorf("POST %s: reading the answer: %v", path, err)
	}
	return resp.StatusCode, resp.Header, b, cr.n.Load()
}

// fields returns n form fields of size bytes each, after a "tool" field
// naming the PDF protect tool of /api/process.
func fields(n int, size int64) []formPart {
	parts := []formPart{{name: "tool", content: "protect-pdf"}}
	for i := range n {
		parts = append(parts, formPart{name: fmt.Sprintf("field%d", i), size: size})
	}
	return parts
}

// sentBound is the most body bytes a client may have pushed when the
// server stopped reading at about 1 MiB: what it read, plus what the
// loopback socket buffers hold.
const sentBound = 24 << 20

func TestFormBounds(t *testing.T) {
	r := startConfigured(t, nil, true, func(c *server.Config) {
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
	})
	const mib = 1 << 20
	tests := []struct {
		name   string
		path   string
		anon   bool
		parts  []formPart
		status int
		code   string
		// huge marks a body far larger than the server may read; bound,
		// when set, is what the server may read of it beyond sentBound
		// (a file part's own limit).
		huge  bool
		bound int64
	}{
		// Finding 6: 64 fields of 1 MiB each; the first is over the
		// parameter cap of a legacy field.
		{name: "legacy fields of 1 MiB", path: "/api/process", parts: fields(64, mib),
			status: 413, code: contracts.ProblemPayloadTooLarge, huge: true},
		{name: "legacy fields over the total", path: "/api/process", parts: fields(9, 120<<10),
			status: 413, code: contracts.ProblemPayloadTooLarge},
		{name: "legacy too many fields", path: "/api/process", parts: fields(40, 8),
			status: 413, code: contracts.ProblemPayloadTooLarge},
		{name: "anonymous legacy form", path: "/api/process", anon: true, parts: fields(64, mib),
			status: 401, code: contracts.ProblemUnauthenticated, huge: true},
		{name: "job field over the body cap", path: "/api/v1/jobs", parts: []formPart{{name: "job", size: 64 * mib}},
			status: 413, code: contracts.ProblemPayloadTooLarge, huge: true},
		{name: "run input over the body cap", path: "/api/v1/tools/pdf_protect/run", parts: []formPart{{name: "input", size: 64 * mib}},
			status: 413, code: contracts.ProblemPayloadTooLarge, huge: true},
		{name: "part header of 2 MiB", path: "/api/v1/jobs",
			parts:  []formPart{{name: "job", header: "X-Pad: " + strings.Repeat("p", 2*mib) + "\r\n", content: "{}"}},
			status: 413, code: contracts.ProblemPayloadTooLarge},
		{name: "file part over the tool's limit and slack", path: "/api/v1/tools/pdf_protect/run",
			parts: []formPart{
				{name: "input", content: `{"user_password":"a","owner_password":"b"}`},
				{name: "file", filename: "a.pdf", content: "%PDF-1.4\n", size: 4 * pdf.MaxProtectFileBytes},
			},
			status: 413, code: contracts.ProblemPayloadTooLarge, huge: true, bound: pdf.MaxProtectFileBytes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			token := r.token
			if tt.anon {
				token = ""
			}
			status, h, body, sent := r.sendForm(tt.path, token, tt.parts...)
			problemCode(t, tt.name, status, h, body, tt.status, tt.code)
			if tt.huge && sent > sentBound+tt.bound {
				t.Errorf("the server read on: the client sent %d bytes", sent)
			}
		})
	}
}

// Eight concurrent forms of 64 fields of 1 MiB, as in finding 6, leave
// the heap where it was: each is refused at its first field's bound, or
// at the gate before a byte of it is read.
func TestFormBoundsMemory(t *testing.T) {
	r := startConfigured(t, nil, true, func(c *server.Config) {
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
	})
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	type answer struct {
		status int
		body   []byte
		sent   int64
	}
	answers := make([]answer, 8)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			path := "/api/process"
			parts := fields(64, 1<<20)
			if i%2 == 1 {
				path, parts = "/api/v1/jobs", []formPart{{name: "job", size: 64 << 20}}
			}
			status, _, body, sent := r.sendForm(path, r.token, parts...)
			answers[i] = answer{status, body, sent}
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	growth := int64(peak.Load()) - int64(before.HeapInuse)
	t.Logf("heap in use %d MiB before, peak %d MiB", before.HeapInuse>>20, peak.Load()>>20)
	refusedAtBound := 0
	for i, a := range answers {
		switch a.status {
		case http.StatusRequestEntityTooLarge:
			refusedAtBound++
		case http.StatusTooManyRequests: // the caller's forms are gated
		case http.StatusServiceUnavailable:
			// The credential store's retryable answer when the token's
			// lookup outwaits its budget (store.Budget) — seen under
			// -race with eight forms streaming on two cores: the form was
			// never read, which is what this test bounds.
			if !bytes.Contains(a.body, []byte(`"tools.store.busy"`)) {
				t.Errorf("form %d: %d %s", i, a.status, a.body)
			}
		default:
			t.Errorf("form %d: %d %s", i, a.status, a.body)
		}
		if a.sent > sentBound {
			t.Errorf("form %d: the server read on: the client sent %d bytes", i, a.sent)
		}
	}
	if refusedAtBound == 0 {
		t.Errorf("no form reached its bound: %+v", answers)
	}
	// Unbounded, the forms buffered 64 MiB each.
	if growth > 32<<20 {
		t.Errorf("the heap grew by %d MiB while the forms were refused", growth>>20)
	}
}

// Finding 7: an upload that trickles a byte every 0.5 s is answered 408
// within the grace period of its part (the ingress budget, 2 s) plus a
// margin, whether the trickle is in its fields or in its file, and
// leaves no job and no file.
func TestSlowUpload(t *testing.T) {
	data := t.TempDir()
	r := startConfigured(t, nil, true, func(c *server.Config) {
		c.DataDir = data
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
	})
	addr := strings.TrimPrefix(r.url, "http://")
	const grace = 2 * time.Second // the default ingress budget
	tests := []struct {
		name string
		// prefix is sent at once, then a byte every 0.5 s.
		prefix string
	}{
		{"fields trickle", "--" + formBoundary + "\r\nContent-Disposition: form-data; name=\"input\"\r\n\r\n{"},
		{"file trickles", "--" + formBoundary + "\r\nContent-Disposition: form-data; name=\"input\"\r\n\r\n" +
			`{"user_password":"a","owner_password":"b"}` + "\r\n--" + formBoundary +
			"\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.pdf\"\r\n\r\n%PDF-1.4\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			head := "POST /api/v1/tools/pdf_protect/run HTTP/1.1\r\nHost: " + addr +
				"\r\nAuthorization: Bearer " + r.token +
				"\r\nContent-Type: multipart/form-data; boundary=" + formBoundary +
				"\r\nContent-Length: 100000\r\n\r\n"
			if _, err := io.WriteString(conn, head+tt.prefix); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			stop := make(chan struct{})
			trickled := make(chan struct{})
			go func() {
				defer close(trickled)
				for range 120 {
					select {
					case <-stop:
						return
					case <-time.After(500 * time.Millisecond):
					}
					if _, err := conn.Write([]byte{'a'}); err != nil {
						return
					}
				}
			}()
			defer func() {
				close(stop)
				<-trickled
			}()
			if err := conn.SetReadDeadline(start.Add(40 * time.Second)); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer after %v: %v", time.Since(start), err)
			}
			took := time.Since(start)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			problemCode(t, tt.name, resp.StatusCode, resp.Header, body, http.StatusRequestTimeout, contracts.ProblemBodyTimeout)
			if limit := grace + 5*time.Second; took > limit {
				t.Errorf("answered after %v, past the part's grace period %v and a margin", took, grace)
			}
		})
	}
	if n := jobRows(t, data); n != 0 {
		t.Errorf("%d jobs were left by the timed-out uploads", n)
	}
	if entries := jobDirs(t, data); len(entries) != 0 {
		t.Errorf("files were left by the timed-out uploads: %v", entries)
	}

	// The same upload, sent at once, is a job with its file: the checks
	// above can see one.
	status, _, body := r.doMultipart("/api/v1/tools/pdf_protect/run", r.token,
		part{name: "input", content: []byte(`{"user_password":"open sesame","owner_password":"owner secret"}`)},
		part{name: "file", content: readPDF(t, "letter_3pages.pdf"), file: true})
	if status != http.StatusOK && status != http.StatusAccepted {
		t.Fatalf("the upload sent at once: %d %s", status, body)
	}
	if n := jobRows(t, data); n != 1 {
		t.Errorf("%d jobs after one upload", n)
	}
	if entries := jobDirs(t, data); len(entries) != 1 {
		t.Errorf("job folders after one upload: %v", entries)
	}
}

// jobRows counts the rows of the jobs table in the database of data.
func jobRows(t *testing.T, data string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, server.DatabaseFile)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM jobs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// jobDirs lists the job folders under data, without its dot files.
func jobDirs(t *testing.T, data string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(data, "jobs"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") { // the folder's lock
			names = append(names, e.Name())
		}
	}
	return names
}

// An anonymous caller has one form of jobs read at a time (the default
// table's tools-job concurrency): while its first upload trickles, a
// second is refused 429 before a byte of it is read, in the default
// report mode too; once the first is answered, the slot is back.
func TestFormGate(t *testing.T) {
	r := startConfigured(t, nil, true, func(c *server.Config) {
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
		// The first form holds its slot for its grace period (the
		// ingress budget): long enough that the second reaches the gate
		// meanwhile on a loaded machine (a full make test on two cores
		// took more than the default 2 s once).
		c.Platform = policy.DefaultPlatform()
		c.Platform.IngressTimeoutMS += 4_000
		c.Platform.RequestTimeoutMS += 4_000 // which bounds the ingress with the rest
	})
	addr := strings.TrimPrefix(r.url, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := "POST /api/v1/jobs HTTP/1.1\r\nHost: " + addr +
		"\r\nContent-Type: multipart/form-data; boundary=" + formBoundary +
		"\r\nContent-Length: 100000\r\n\r\n--" + formBoundary + "\r\nContent-Disposition: form-data; name=\"job\"\r\n\r\n{"
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	answered := make(chan int, 1)
	go func() {
		if err := conn.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
			answered <- 0
			return
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	// The first form is being read (its slot taken) once its head is in;
	// a second anonymous form is refused until it is answered.
	var status int
	var h http.Header
	var body []byte
	var sent int64
	eventually(t, "the second form is refused at the gate", func() bool {
		status, h, body, sent = r.sendForm("/api/v1/jobs", "", formPart{name: "job", size: 32 << 20})
		return status == http.StatusTooManyRequests
	})
	problemCode(t, "second anonymous form", status, h, body, http.StatusTooManyRequests, contracts.ProblemConcurrencyExceeded)
	if h.Get("Retry-After") == "" {
		t.Errorf("no Retry-After: %v", h)
	}
	if sent > sentBound {
		t.Errorf("the gate read on: the client sent %d bytes", sent)
	}
	// The first, which never finishes, is cut at its grace period.
	if got := <-answered; got != http.StatusRequestTimeout {
		t.Fatalf("the trickling form: %d", got)
	}
	status, h, body, _ = r.sendForm("/api/v1/jobs", "", formPart{name: "job", content: `{"type":"pdf","input":{"tool":"nothing"}}`})
	problemCode(t, "a form after the slot is back", status, h, body, http.StatusNotFound, contracts.ProblemToolNotFound)
}
