package server_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/server"
)

// bigPDF returns a valid one-page PDF of at least minBytes: a US Letter
// page covered by one 8-bit gray image of random (incompressible) pixels,
// so that qpdf cannot shrink it and pdftoppm has to decode all of it.
func bigPDF(t *testing.T, minBytes int) []byte {
	t.Helper()
	side := 1
	for side*side < minBytes {
		side += 16
	}
	pixels := make([]byte, side*side)
	if _, err := rand.Read(pixels); err != nil {
		t.Fatal(err)
	}
	content := []byte("q 612 0 0 792 0 0 cm /Im0 Do Q\n")
	var b bytes.Buffer
	var offsets []int
	obj := func(body string, stream []byte) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s", len(offsets), body)
		if stream != nil {
			b.WriteString("\nstream\n")
			b.Write(stream)
			b.WriteString("\nendstream")
		}
		b.WriteString("\nendobj\n")
	}
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	obj("<< /Type /Catalog /Pages 2 0 R >>", nil)
	obj("<< /Type /Pages /Kids [3 0 R] /Count 1 >>", nil)
	obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im0 5 0 R >> >> /Contents 4 0 R >>", nil)
	obj(fmt.Sprintf("<< /Length %d >>", len(content)), content)
	obj(fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Length %d >>",
		side, side, len(pixels)), pixels)
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}

// TestJobToolsLargePDF (issue 16, item 1): a PDF of more than 10 MiB —
// a hundred times the old parameter-borne limit — is protected and
// rendered through the run route (multipart) and through POST /jobs
// (multipart), reaching the worker as the job's file and coming back as
// output files the engines wrote into the job's folder; and no native
// item leaves a scratch folder behind.
func TestJobToolsLargePDF(t *testing.T) {
	if _, err := exec.LookPath("qpdf"); err != nil {
		t.Skip("qpdf is not installed")
	}
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		t.Skip("pdftoppm is not installed")
	}
	dataDir := t.TempDir()
	r := startConfigured(t, nil, true, func(c *server.Config) {
		c.DataDir = dataDir
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond}
	})
	big := bigPDF(t, 10<<20+1)
	if len(big) < 10<<20 {
		t.Fatalf("the generated PDF takes %d bytes", len(big))
	}
	src := filepath.Join(t.TempDir(), "big.pdf")
	if err := os.WriteFile(src, big, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("qpdf", "--check", src).CombinedOutput(); err != nil {
		t.Fatalf("qpdf --check of the generated PDF: %v\n%s", err, out)
	}
	protectInput := []byte(`{"user_password":"open sesame","owner_password":"owner secret"}`)

	// finish submits through send, waits for the job and checks it
	// succeeded with the named output files.
	finish := func(what string, status int, body []byte, names ...string) jobDoc {
		t.Helper()
		if status != http.StatusOK && status != http.StatusAccepted {
			t.Fatalf("%s: %d %s", what, status, body)
		}
		var id struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(body, &id); err != nil || id.ID == "" {
			t.Fatalf("%s: %s", what, body)
		}
		job := r.final(id.ID)
		if job.State != "succeeded" || len(job.Files) != len(names) {
			t.Fatalf("%s: job %+v, error %+v", what, job, job.Error)
		}
		for i, n := range names {
			if job.Files[i].Name != n {
				t.Errorf("%s: file %d is %q, want %q", what, i, job.Files[i].Name, n)
			}
		}
		return job
	}
	// protected checks that job's file.pdf is the big PDF encrypted.
	protected := func(what string, job jobDoc) {
		t.Helper()
		if job.Result["file"] != "file.pdf" {
			t.Errorf("%s: result %v", what, job.Result)
		}
		status, _, pdf := r.do("GET", "/api/v1/jobs/"+job.ID+"/files/file.pdf", r.token, nil)
		if status != http.StatusOK || len(pdf) < 10<<20 || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
			t.Fatalf("%s: download %d, %d bytes", what, status, len(pdf))
		}
		path := filepath.Join(t.TempDir(), "protected.pdf")
		if err := os.WriteFile(path, pdf, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := exec.Command("qpdf", "--requires-password", path).Run(); err != nil {
			t.Errorf("%s: qpdf --requires-password: %v (want exit 0)", what, err)
		}
		if out, err := exec.Command("qpdf", "--password=open sesame", "--check", path).CombinedOutput(); err != nil {
			t.Errorf("%s: qpdf --check with the user password: %v\n%s", what, err, out)
		}
	}
	// rendered checks that job's one page is a PNG of a Letter page at 36 dpi.
	rendered := func(what string, job jobDoc) {
		t.Helper()
		status, _, b := r.do("GET", "/api/v1/jobs/"+job.ID+"/files/pages-0-png.png", r.token, nil)
		if status != http.StatusOK {
			t.Fatalf("%s: download %d", what, status)
		}
		if cfg, err := png.DecodeConfig(bytes.NewReader(b)); err != nil || cfg.Width != 306 || cfg.Height != 396 {
			t.Errorf("%s: PNG %+v, %v", what, cfg, err)
		}
	}

	status, _, body := r.doMultipart("/api/v1/tools/pdf_protect/run", r.token,
		part{name: "input", content: protectInput}, part{name: "wait_ms", content: []byte("30000")},
		part{name: "file", content: big, file: true})
	checkContract(t, contracts.RunV1, body)
	protected("protect run", finish("protect run", status, body, "file.pdf"))

	status, _, body = r.doMultipart("/api/v1/jobs", r.token,
		part{name: "job", content: []byte(`{"type":"pdf","input":{"tool":"protect","user_password":"open sesame","owner_password":"owner secret"}}`)},
		part{name: "file", content: big, file: true})
	protected("protect job", finish("protect job", status, body, "file.pdf"))

	status, _, body = r.doMultipart("/api/v1/tools/pdf_to_image/run", r.token,
		part{name: "input", content: []byte(`{"dpi":36}`)}, part{name: "wait_ms", content: []byte("30000")},
		part{name: "file", content: big, file: true})
	rendered("render run", finish("render run", status, body, "pages-0-png.png"))

	status, _, body = r.doMultipart("/api/v1/jobs", r.token,
		part{name: "job", content: []byte(`{"type":"pdf","input":{"tool":"render","dpi":36}}`)},
		part{name: "file", content: big, file: true})
	rendered("render job", finish("render job", status, body, "pages-0-png.png"))

	// The items' scratch folders were in the data folder (the
	// supervisor's instance folder stays until it closes), and every
	// item's is gone with its item.
	if inst, _ := filepath.Glob(filepath.Join(dataDir, server.ScratchDir, "*")); len(inst) != 1 {
		t.Errorf("scratch instance folders: %v", inst)
	}
	left, err := filepath.Glob(filepath.Join(dataDir, server.ScratchDir, "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range left {
		t.Errorf("left in the scratch folder: %s", name)
	}
}
