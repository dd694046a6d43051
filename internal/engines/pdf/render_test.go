package pdf_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/engines/pdf"
	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// renderResult is the result of pdf_to_image.
type renderResult struct {
	DPI       int `json:"dpi"`
	PageCount int `json:"page_count"`
	Pages     []struct {
		Page     int    `json:"page"`
		WidthPx  int    `json:"width_px"`
		HeightPx int    `json:"height_px"`
		PNG      []byte `json:"png"`
	} `json:"pages"`
}

// size is a page's expected image size in pixels.
type size struct{ page, w, h int }

func TestRender(t *testing.T) {
	requireEngines(t)
	ownerOnly := ownerOnlyEncrypted(t)
	protected := protectedLetter(t)
	tests := []struct {
		name      string
		file      []byte
		p         params
		dpi       int
		pageCount int
		want      []size
	}{
		{name: "letter at the default dpi", file: fixtureBytes(t, "letter_3pages.pdf"), dpi: 96, pageCount: 3,
			want: []size{{1, 816, 1056}, {2, 816, 1056}, {3, 816, 1056}}},
		{name: "letter at 72 dpi is its size in points", file: fixtureBytes(t, "letter_3pages.pdf"), p: params{"dpi": 72}, dpi: 72, pageCount: 3,
			want: []size{{1, 612, 792}, {2, 612, 792}, {3, 612, 792}}},
		{name: "a range", file: fixtureBytes(t, "letter_3pages.pdf"), p: params{"dpi": 36, "first_page": 2, "last_page": 3}, dpi: 36, pageCount: 3,
			want: []size{{2, 306, 396}, {3, 306, 396}}},
		{name: "one page", file: fixtureBytes(t, "letter_3pages.pdf"), p: params{"dpi": 150, "first_page": 2, "last_page": 2}, dpi: 150, pageCount: 3,
			want: []size{{2, 1275, 1650}}},
		{name: "sizes and rotation", file: fixtureBytes(t, "mixed_sizes.pdf"), p: params{"dpi": 72}, dpi: 72, pageCount: 3,
			want: []size{{1, 595, 842}, {2, 842, 595}, {3, 792, 612}}},
		{name: "at most 8 pages by default", file: fixtureBytes(t, "small_10pages.pdf"), dpi: 96, pageCount: 10,
			want: []size{{1, 192, 192}, {2, 192, 192}, {3, 192, 192}, {4, 192, 192}, {5, 192, 192}, {6, 192, 192}, {7, 192, 192}, {8, 192, 192}}},
		{name: "the rest from first_page", file: fixtureBytes(t, "small_10pages.pdf"), p: params{"first_page": 9}, dpi: 96, pageCount: 10,
			want: []size{{9, 192, 192}, {10, 192, 192}}},
		{name: "8 pages exactly", file: fixtureBytes(t, "small_10pages.pdf"), p: params{"first_page": 3, "last_page": 10, "dpi": 36}, dpi: 36, pageCount: 10,
			want: []size{{3, 72, 72}, {4, 72, 72}, {5, 72, 72}, {6, 72, 72}, {7, 72, 72}, {8, 72, 72}, {9, 72, 72}, {10, 72, 72}}},
		{name: "repaired damage", file: fixtureBytes(t, "bad_xref.pdf"), p: params{"dpi": 36, "last_page": 1}, dpi: 36, pageCount: 3,
			want: []size{{1, 306, 396}}},
		{name: "owner password only", file: ownerOnly, p: params{"dpi": 36, "last_page": 1}, dpi: 36, pageCount: 3,
			want: []size{{1, 306, 396}}},
		{name: "user password", file: protected, p: params{"dpi": 36, "password": "open sesame"}, dpi: 36, pageCount: 3,
			want: []size{{1, 306, 396}, {2, 306, 396}, {3, 306, 396}}},
		{name: "owner password", file: protected, p: params{"dpi": 72, "first_page": 2, "last_page": 2, "password": "owner secret"}, dpi: 72, pageCount: 3,
			want: []size{{2, 612, 792}}},
		{name: "owner password of a file that opens without one", file: ownerOnly, p: params{"dpi": 36, "last_page": 1, "password": "owner"}, dpi: 36, pageCount: 3,
			want: []size{{1, 306, 396}}},
		{name: "password of a file that is not encrypted", file: fixtureBytes(t, "letter_3pages.pdf"), p: params{"dpi": 36, "last_page": 1, "password": "unused"}, dpi: 36, pageCount: 3,
			want: []size{{1, 306, 396}}},
		{name: "noise that fits", file: fixtureBytes(t, "noise_8pages.pdf"), p: params{"dpi": 36, "last_page": 1}, dpi: 36, pageCount: 8,
			want: []size{{1, 306, 396}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := params{"operation": "render", "file": tt.file}
			for k, v := range tt.p {
				p[k] = v
			}
			var res renderResult
			if err := compute(t, "pdf_to_image", p, &res); err != nil {
				t.Fatalf("compute: %v", err)
			}
			if res.DPI != tt.dpi || res.PageCount != tt.pageCount || len(res.Pages) != len(tt.want) {
				t.Fatalf("dpi %d, page_count %d, %d pages; want %d, %d, %d", res.DPI, res.PageCount, len(res.Pages), tt.dpi, tt.pageCount, len(tt.want))
			}
			for i, w := range tt.want {
				got := res.Pages[i]
				if got.Page != w.page || got.WidthPx != w.w || got.HeightPx != w.h {
					t.Errorf("page %d %d×%d, want page %d %d×%d", got.Page, got.WidthPx, got.HeightPx, w.page, w.w, w.h)
				}
				cfg, err := png.DecodeConfig(bytes.NewReader(got.PNG))
				if err != nil || cfg.Width != w.w || cfg.Height != w.h {
					t.Errorf("page %d: PNG %d×%d, %v", got.Page, cfg.Width, cfg.Height, err)
				}
			}
		})
	}
}

// TestRenderPixels: the image is the page. Page 1 of letter_3pages has a
// blue block from (36, 36) to (240, 234) points, from the bottom left, on
// white.
func TestRenderPixels(t *testing.T) {
	requireEngines(t)
	var res renderResult
	p := params{"operation": "render", "file": fixtureBytes(t, "letter_3pages.pdf"), "dpi": 72, "last_page": 1}
	if err := compute(t, "pdf_to_image", p, &res); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(res.Pages[0].PNG))
	if err != nil {
		t.Fatalf("decoding the PNG: %v", err)
	}
	tests := []struct {
		name string
		x, y int
		want color.RGBA
	}{
		{name: "inside the block", x: 100, y: 792 - 100, want: color.RGBA{0, 0, 255, 255}},
		{name: "right of the block", x: 400, y: 792 - 100, want: color.RGBA{255, 255, 255, 255}},
		{name: "above the block", x: 100, y: 792 - 300, want: color.RGBA{255, 255, 255, 255}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := color.RGBAModel.Convert(img.At(tt.x, tt.y)).(color.RGBA); got != tt.want {
				t.Errorf("pixel (%d, %d) is %v, want %v", tt.x, tt.y, got, tt.want)
			}
		})
	}
}

func TestRenderRefusals(t *testing.T) {
	requireEngines(t)
	var protected protectResult
	if err := compute(t, "pdf_protect", params{"operation": "protect", "file": fixtureBytes(t, "letter_3pages.pdf"),
		"user_password": "a", "owner_password": "b"}, &protected); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		file    []byte
		p       params
		code    toolerr.Code
		message string
	}{
		{name: "not a PDF", file: []byte("GIF89a, or anything else"), code: toolerr.InvalidParameters, message: "not a PDF"},
		{name: "damaged", file: fixtureBytes(t, "damaged.pdf"), code: toolerr.InvalidParameters, message: "not a readable PDF"},
		{name: "password-protected", file: protected.File, code: toolerr.InvalidParameters, message: "password-protected"},
		{name: "wrong password", file: protected.File, p: params{"password": "Wr0ng passw0rd"}, code: toolerr.InvalidParameters, message: "password does not open the file"},
		{name: "wrong password of a file that opens without one", file: ownerOnlyEncrypted(t), p: params{"password": "Wr0ng passw0rd"}, code: toolerr.InvalidParameters, message: "password does not open the file"},
		{name: "password of a damaged file", file: fixtureBytes(t, "damaged.pdf"), p: params{"password": "Wr0ng passw0rd"}, code: toolerr.InvalidParameters, message: "not a readable PDF"},
		{name: "no pages", file: fixtureBytes(t, "no_pages.pdf"), code: toolerr.InvalidParameters, message: "no pages"},
		{name: "9 pages", file: fixtureBytes(t, "small_10pages.pdf"), p: params{"first_page": 1, "last_page": 9}, code: toolerr.InvalidParameters, message: "at most 8"},
		{name: "range backwards", file: fixtureBytes(t, "small_10pages.pdf"), p: params{"first_page": 3, "last_page": 2}, code: toolerr.InvalidParameters, message: "before first_page"},
		{name: "first page past the end", file: fixtureBytes(t, "letter_3pages.pdf"), p: params{"first_page": 4}, code: toolerr.InvalidParameters, message: "first_page 4 is past the document's last page, 3"},
		{name: "last page past the end", file: fixtureBytes(t, "letter_3pages.pdf"), p: params{"last_page": 5}, code: toolerr.InvalidParameters, message: "last_page 5 is past"},
		{name: "page too large", file: fixtureBytes(t, "huge_page.pdf"), p: params{"dpi": 36}, code: toolerr.InvalidParameters, message: "larger than 4096 pixels"},
		{name: "result too large", file: fixtureBytes(t, "noise_8pages.pdf"), p: params{"dpi": 300}, code: toolerr.OutputLimitExceeded, message: "render fewer pages (pages 1 to 2 fit) or use a lower dpi"},
		// Refused by the input schema, before the tool runs.
		{name: "dpi too high", file: fixtureBytes(t, "letter_3pages.pdf"), p: params{"dpi": 301}, code: toolerr.InvalidParameters},
		{name: "dpi too low", file: fixtureBytes(t, "letter_3pages.pdf"), p: params{"dpi": 35}, code: toolerr.InvalidParameters},
		{name: "page 0", file: fixtureBytes(t, "letter_3pages.pdf"), p: params{"first_page": 0}, code: toolerr.InvalidParameters},
		{name: "empty password", file: protected.File, p: params{"password": ""}, code: toolerr.InvalidParameters},
		{name: "non-ASCII password", file: protected.File, p: params{"password": "pässword"}, code: toolerr.InvalidParameters},
		{name: "password too long", file: protected.File, p: params{"password": strings.Repeat("x", 128)}, code: toolerr.InvalidParameters},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := params{"operation": "render", "file": tt.file}
			for k, v := range tt.p {
				p[k] = v
			}
			var res renderResult
			te := wantToolError(t, compute(t, "pdf_to_image", p, &res), tt.code, tt.message)
			if te.Retryable {
				t.Error("retryable")
			}
			if pw, _ := tt.p["password"].(string); pw != "" && strings.Contains(te.Message, pw) {
				t.Errorf("message %q quotes the password", te.Message)
			}
		})
	}
}

// TestRenderDPIGuard: parameters that skip the input schema still meet the
// tool's own bounds.
func TestRenderDPIGuard(t *testing.T) {
	body, _ := json.Marshal(params{"operation": "render", "file": []byte("%PDF-1.4"), "dpi": 1000})
	ctx := native.NewContext(context.Background(), "test", time.Now().Add(time.Minute), time.Second)
	_, err := computeWith(t, ctx, "pdf_to_image", "render", body)
	wantToolError(t, err, toolerr.InvalidParameters, "dpi must be 36 to 300")
}

// TestRenderPasswordGuard: a password that skips the input schema still
// meets the tool's own check.
func TestRenderPasswordGuard(t *testing.T) {
	body, _ := json.Marshal(params{"operation": "render", "file": []byte("%PDF-1.4"), "password": "ü"})
	ctx := native.NewContext(context.Background(), "test", time.Now().Add(time.Minute), time.Second)
	_, err := computeWith(t, ctx, "pdf_to_image", "render", body)
	wantToolError(t, err, toolerr.InvalidParameters, "printable ASCII")
}

// TestRenderDecrypted: a file rendered with its password gives the same
// images as the file before it was protected.
func TestRenderDecrypted(t *testing.T) {
	requireEngines(t)
	var plain, decrypted renderResult
	p := params{"operation": "render", "file": fixtureBytes(t, "letter_3pages.pdf"), "dpi": 36}
	if err := compute(t, "pdf_to_image", p, &plain); err != nil {
		t.Fatal(err)
	}
	p["file"], p["password"] = protectedLetter(t), "open sesame"
	if err := compute(t, "pdf_to_image", p, &decrypted); err != nil {
		t.Fatal(err)
	}
	if len(decrypted.Pages) != 3 || len(plain.Pages) != 3 {
		t.Fatalf("%d and %d pages, want 3", len(plain.Pages), len(decrypted.Pages))
	}
	for i := range plain.Pages {
		if !bytes.Equal(plain.Pages[i].PNG, decrypted.Pages[i].PNG) {
			t.Errorf("page %d differs from the unprotected file's", plain.Pages[i].Page)
		}
	}
}

// TestRenderArguments: the password never reaches an engine's argument
// list, which other users can read in /proc. A qpdf and a pdftoppm on
// PATH record their arguments and run the real ones.
func TestRenderArguments(t *testing.T) {
	requireEngines(t)
	const user, owner = "UserPassw0rd", "OwnerPassw0rd"
	var protected protectResult
	if err := compute(t, "pdf_protect", params{"operation": "protect", "file": fixtureBytes(t, "letter_3pages.pdf"),
		"user_password": user, "owner_password": owner}, &protected); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	argv := filepath.Join(dir, "argv")
	for _, engine := range []string{"qpdf", "pdftoppm"} {
		real, err := exec.LookPath(engine)
		if err != nil {
			t.Fatal(err)
		}
		script := "#!/bin/sh\nprintf '" + engine + " %s\\n' \"$@\" >> '" + argv + "'\nexec '" + real + "' \"$@\"\n"
		if err := os.WriteFile(filepath.Join(dir, engine), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))

	for _, pw := range []string{user, owner} {
		var res renderResult
		p := params{"operation": "render", "file": protected.File, "dpi": 36, "last_page": 1, "password": pw}
		if err := compute(t, "pdf_to_image", p, &res); err != nil {
			t.Fatalf("password %s: %v", pw, err)
		}
	}
	var res renderResult
	p := params{"operation": "render", "file": protected.File, "password": "WrongPassw0rd"}
	te := wantToolError(t, compute(t, "pdf_to_image", p, &res), toolerr.InvalidParameters, "password does not open the file")
	if strings.Contains(te.Message, "Passw0rd") {
		t.Errorf("message %q quotes the password", te.Message)
	}

	got, err := os.ReadFile(argv)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got, []byte("qpdf --job-json-file=job.json")) || !bytes.Contains(got, []byte("pdftoppm -png")) {
		t.Fatalf("the recording engines did not run the decryption and the rendering:\n%s", got)
	}
	if bytes.Contains(got, []byte("Passw0rd")) || bytes.Contains(got, []byte("-upw")) || bytes.Contains(got, []byte("-opw")) {
		t.Fatalf("a password is on an engine's command line:\n%s", got)
	}
}

// protectedLetter returns letter_3pages protected by pdf_protect with the
// user password "open sesame" and the owner password "owner secret".
func protectedLetter(t *testing.T) []byte {
	t.Helper()
	var res protectResult
	if err := compute(t, "pdf_protect", params{"operation": "protect", "file": fixtureBytes(t, "letter_3pages.pdf"),
		"user_password": "open sesame", "owner_password": "owner secret"}, &res); err != nil {
		t.Fatalf("protecting letter_3pages.pdf: %v", err)
	}
	return res.File
}

// ownerOnlyEncrypted returns letter_3pages encrypted by qpdf with an owner
// password and an empty user password: it opens without a password.
func ownerOnlyEncrypted(t *testing.T) []byte {
	t.Helper()
	in := writeFile(t, "in.pdf", fixtureBytes(t, "letter_3pages.pdf"))
	out := filepath.Join(t.TempDir(), "out.pdf")
	if code := exitCode(t, exec.Command("qpdf", "--encrypt", "", "owner", "256", "--print=none", "--", in, out)); code != 0 {
		t.Fatalf("qpdf --encrypt: exit %d", code)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fakeQPDF puts a qpdf that runs script first on PATH.
func fakeQPDF(t *testing.T, script string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "qpdf"), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestEngineFailures: how an engine ends maps to the item's outcome, with
// a fake qpdf (the first engine both services run).
func TestEngineFailures(t *testing.T) {
	letter, err := os.ReadFile(filepath.Join(fixtureDir, "letter_3pages.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		script    string
		item      time.Duration // the execution's hard deadline; 0 for none
		engine    time.Duration // the engine budget
		code      toolerr.Code
		retryable bool
		message   string
	}{
		{name: "crash", script: "kill -SEGV $$", engine: 5 * time.Second, code: toolerr.ExecutionFailed, message: "qpdf ended with signal segmentation fault"},
		{name: "unknown exit status", script: "exit 7", engine: 5 * time.Second, code: toolerr.ExecutionFailed, message: "qpdf exited with status 7"},
		{name: "past the engine window", script: "exec sleep 30", engine: 300 * time.Millisecond, code: toolerr.ExecutionLimit, retryable: true, message: "did not finish within the engine window of 300 ms"},
		{name: "execution ended", script: "exec sleep 30", item: 300 * time.Millisecond, engine: 5 * time.Second, code: toolerr.ExecutionLimit, retryable: true},
	}
	for _, tt := range tests {
		for _, svc := range []struct{ code, op string }{{"pdf_protect", "protect"}, {"pdf_to_image", "render"}} {
			t.Run(tt.name+"/"+svc.code, func(t *testing.T) {
				fakeQPDF(t, tt.script)
				base := context.Background()
				if tt.item > 0 {
					var cancel context.CancelFunc
					base, cancel = context.WithTimeout(base, tt.item)
					defer cancel()
				}
				ctx := native.NewContext(base, "test", time.Now().Add(10*time.Second), tt.engine)
				body, _ := json.Marshal(params{"operation": svc.op, "file": letter, "user_password": "u", "owner_password": "o"})
				if svc.op == "render" {
					body, _ = json.Marshal(params{"operation": svc.op, "file": letter})
				}
				start := time.Now()
				_, err := computeWith(t, ctx, svc.code, svc.op, body)
				te := wantToolError(t, err, tt.code, tt.message)
				if te.Retryable != tt.retryable {
					t.Errorf("retryable %v, want %v", te.Retryable, tt.retryable)
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("Compute returned after %v: the engine was not stopped", d)
				}
			})
		}
	}
}

// TestEngineWindowRefused: an item without time left for its engine window
// is refused before any engine runs, retryably.
func TestEngineWindowRefused(t *testing.T) {
	ctx := native.NewContext(context.Background(), "test", time.Now().Add(time.Second), 15*time.Second)
	body, _ := json.Marshal(params{"operation": "render", "file": []byte("%PDF-1.4\n")})
	_, err := computeWith(t, ctx, "pdf_to_image", "render", body)
	if te := wantToolError(t, err, toolerr.ExecutionLimit, ""); !te.Retryable {
		t.Error("not retryable")
	}
}

// TestFileLimit: a file over MaxFileBytes, which only a caller that skips
// the parameter cap can send, is refused.
func TestFileLimit(t *testing.T) {
	body, _ := json.Marshal(params{"operation": "render", "file": make([]byte, pdf.MaxFileBytes+1)})
	ctx := native.NewContext(context.Background(), "test", time.Now().Add(time.Minute), time.Second)
	_, err := computeWith(t, ctx, "pdf_to_image", "render", body)
	wantToolError(t, err, toolerr.InvalidParameters, "the limit is 98304")
}
