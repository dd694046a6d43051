package pdf_test

import (
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/engines/pdf"
	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

// computeJob runs one item of code as a job's item: the PDF as the job
// file "file" at path (the parameters' "file" the empty placeholder) and
// an output folder, in a scratch folder that must be empty afterwards. It
// returns the output folder beside the result.
func computeJob(t *testing.T, code string, p params, path string) (string, []byte, error) {
	t.Helper()
	s := services(t)[code]
	p["file"] = []byte{}
	body, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := wire.Decode(body, wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.in.Validate(doc, toolerr.InvalidParameters); err != nil {
		t.Fatalf("the job's parameters fail the input schema: %v", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	out, scratch := t.TempDir(), t.TempDir()
	now := time.Now()
	ctx := native.NewContext(context.Background(), "test", now.Add(time.Duration(s.eff.SoftTimeoutMS)*time.Millisecond),
		time.Duration(s.eff.EngineTimeoutMS)*time.Millisecond).WithScratchDir(scratch)
	res, err := pdf.Package().Compute(ctx, native.Call{ToolCode: code, Operation: s.op, Parameters: body,
		Files:  []engine.File{{Name: "file", Path: path, MediaType: "application/pdf", SizeBytes: fi.Size()}},
		OutDir: out})
	if left, _ := os.ReadDir(scratch); len(left) > 0 {
		t.Errorf("Compute left %d entries in the scratch folder (%s)", len(left), left[0].Name())
	}
	if err == nil {
		rdoc, derr := wire.Decode(res, wire.Limits{})
		if derr != nil {
			t.Fatal(derr)
		}
		if verr := s.out.Validate(rdoc, toolerr.InvalidOutput); verr != nil {
			t.Fatalf("result fails the output schema: %v", verr)
		}
	}
	return out, res, err
}

// TestJobFiles (issue 16, item 1): as a job's item, both services read the
// PDF from the job file where it is (left unchanged), write their outputs
// into the job's output folder and name them in the result; a job file
// over the service's own limit, or a PDF given both ways, is refused.
func TestJobFiles(t *testing.T) {
	requireEngines(t)
	letter := fixtureBytes(t, "letter_3pages.pdf")
	in := writeFile(t, "in.pdf", letter)
	if err := os.Chmod(in, 0o400); err != nil { // as the jobs subsystem keeps it
		t.Fatal(err)
	}

	out, res, err := computeJob(t, "pdf_protect", params{"operation": "protect", "user_password": "open sesame", "owner_password": "owner secret"}, in)
	if err != nil {
		t.Fatal(err)
	}
	var prot struct {
		File      string `json:"file"`
		SizeBytes int64  `json:"size_bytes"`
		PageCount int    `json:"page_count"`
	}
	if err := json.Unmarshal(res, &prot); err != nil || prot.File != "file.pdf" || prot.PageCount != 3 {
		t.Fatalf("protect result %s", res)
	}
	fi, err := os.Stat(filepath.Join(out, "file.pdf"))
	if err != nil || fi.Size() != prot.SizeBytes {
		t.Fatalf("the output file: %v (size_bytes %d)", err, prot.SizeBytes)
	}
	if code, _ := qpdfWithPassword(t, filepath.Join(out, "file.pdf"), "open sesame", map[string]any{"check": ""}); code != 0 {
		t.Errorf("qpdf with the user password: exit %d", code)
	}
	if b, err := os.ReadFile(in); err != nil || string(b) != string(letter) {
		t.Error("the job's input file changed")
	}

	out, res, err = computeJob(t, "pdf_to_image", params{"operation": "render", "dpi": 36, "first_page": 2}, in)
	if err != nil {
		t.Fatal(err)
	}
	var ren struct {
		Pages []struct {
			Page int    `json:"page"`
			PNG  string `json:"png"`
		} `json:"pages"`
	}
	if err := json.Unmarshal(res, &ren); err != nil || len(ren.Pages) != 2 || ren.Pages[0].Page != 2 || ren.Pages[0].PNG != "pages-0-png.png" ||
		ren.Pages[1].PNG != "pages-1-png.png" {
		t.Fatalf("render result %s", res)
	}
	for _, p := range ren.Pages {
		f, err := os.Open(filepath.Join(out, p.PNG))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width != 306 || cfg.Height != 396 {
			t.Errorf("%s: %+v, %v", p.PNG, cfg, err)
		}
	}

	// A job file one byte over the service's limit (sparse: no disk).
	huge := filepath.Join(t.TempDir(), "huge.pdf")
	if err := os.WriteFile(huge, letter, 0o600); err != nil {
		t.Fatal(err)
	}
	for code, limit := range map[string]int64{"pdf_protect": pdf.MaxProtectFileBytes, "pdf_to_image": pdf.MaxRenderFileBytes} {
		if err := os.Truncate(huge, limit+1); err != nil {
			t.Fatal(err)
		}
		p := params{"operation": "render"}
		if code == "pdf_protect" {
			p = params{"operation": "protect", "user_password": "a", "owner_password": "b"}
		}
		_, _, err := computeJob(t, code, p, huge)
		wantToolError(t, err, toolerr.InvalidParameters, "the limit is")
	}

	// The PDF both as a job file and in the parameters.
	s := services(t)["pdf_protect"]
	body, _ := json.Marshal(params{"operation": "protect", "file": letter, "user_password": "a", "owner_password": "b"})
	ctx := native.NewContext(context.Background(), "test", time.Now().Add(time.Duration(s.eff.SoftTimeoutMS)*time.Millisecond),
		time.Duration(s.eff.EngineTimeoutMS)*time.Millisecond)
	_, err = pdf.Package().Compute(ctx, native.Call{ToolCode: "pdf_protect", Operation: "protect", Parameters: body,
		Files: []engine.File{{Name: "file", Path: in}}, OutDir: t.TempDir()})
	wantToolError(t, err, toolerr.InvalidParameters, "given twice")
}
