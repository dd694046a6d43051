package pdf_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// protectResult is the result of pdf_protect.
type protectResult struct {
	File      []byte `json:"file"`
	SizeBytes int64  `json:"size_bytes"`
	PageCount int    `json:"page_count"`
	Repaired  bool   `json:"repaired"`
}

// writeFile writes data to a new file in a test directory, readable by
// its owner alone, and returns its path.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// qpdfWithPassword runs qpdf with password (through a job file, so that
// any printable password works) on path with the job's other fields, and
// returns its exit status and standard output.
func qpdfWithPassword(t *testing.T, path, password string, job map[string]any) (int, string) {
	t.Helper()
	job["inputFile"] = path
	if password != "" {
		job["password"] = password
	}
	b, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("qpdf", "--job-json-file="+writeFile(t, "job.json", b))
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	return exitCode(t, cmd), stdout.String()
}

func TestProtect(t *testing.T) {
	requireEngines(t)
	no := false
	tests := []struct {
		name          string
		fixture       string
		user, owner   string
		restrict      bool
		pages         int
		repaired      bool
		wantEncrypted []string // lines of qpdf --show-encryption with the user password
	}{
		{name: "all allowed", fixture: "letter_3pages.pdf", user: "open sesame", owner: "owner-secret", pages: 3,
			wantEncrypted: []string{"extract for any purpose: allowed", "print high resolution: allowed", "modify anything: allowed"}},
		{name: "restricted", fixture: "mixed_sizes.pdf", user: "u", owner: "o", restrict: true, pages: 3,
			wantEncrypted: []string{"extract for any purpose: not allowed", "print low resolution: not allowed", "print high resolution: not allowed", "modify anything: not allowed"}},
		// Passwords that an argument list or argument file would misread.
		{name: "option-like passwords", fixture: "small_10pages.pdf", user: `--print=none "x\ y`, owner: `@owner -- 256`, pages: 10},
		{name: "repaired input", fixture: "bad_xref.pdf", user: "user", owner: "owner", pages: 3, repaired: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := params{"operation": "protect", "file": fixtureBytes(t, tt.fixture), "user_password": tt.user, "owner_password": tt.owner}
			if tt.restrict {
				p["allow_print"], p["allow_modify"], p["allow_extract"] = no, no, no
			}
			var res protectResult
			if err := compute(t, "pdf_protect", p, &res); err != nil {
				t.Fatalf("compute: %v", err)
			}
			if res.SizeBytes != int64(len(res.File)) || res.PageCount != tt.pages || res.Repaired != tt.repaired {
				t.Errorf("size_bytes %d of %d, page_count %d, repaired %v", res.SizeBytes, len(res.File), res.PageCount, res.Repaired)
			}
			out := writeFile(t, "out.pdf", res.File)

			// Without a password it does not open.
			if code := exitCode(t, exec.Command("qpdf", "--requires-password", out)); code != 0 {
				t.Errorf("qpdf --requires-password: exit %d, want 0 (a password is required)", code)
			}
			if code := exitCode(t, exec.Command("qpdf", "--check", out)); code != 2 {
				t.Errorf("qpdf --check without a password: exit %d, want 2", code)
			}
			if code, _ := qpdfWithPassword(t, out, "wrong", map[string]any{"check": ""}); code != 2 {
				t.Errorf("qpdf --check with a wrong password: exit %d, want 2", code)
			}
			// With the user password it opens, whole, encrypted with AES-256.
			if code, _ := qpdfWithPassword(t, out, tt.user, map[string]any{"check": ""}); code != 0 {
				t.Errorf("qpdf --check with the user password: exit %d, want 0", code)
			}
			code, enc := qpdfWithPassword(t, out, tt.user, map[string]any{"showEncryption": ""})
			if code != 0 {
				t.Fatalf("qpdf --show-encryption: exit %d", code)
			}
			want := append([]string{"R = 6", "Supplied password is user password",
				"stream encryption method: AESv3", "string encryption method: AESv3", "file encryption method: AESv3"}, tt.wantEncrypted...)
			for _, w := range want {
				if !strings.Contains(enc, w+"\n") {
					t.Errorf("qpdf --show-encryption lacks %q:\n%s", w, enc)
				}
			}
			if _, n := qpdfWithPassword(t, out, tt.user, map[string]any{"showNpages": ""}); strings.TrimSpace(n) != strconv.Itoa(tt.pages) {
				t.Errorf("qpdf --show-npages: %q, want %d", n, tt.pages)
			}
			// The owner password gives owner access.
			if _, enc := qpdfWithPassword(t, out, tt.owner, map[string]any{"showEncryption": ""}); !strings.Contains(enc, "Supplied password is owner password\n") {
				t.Errorf("the owner password is not the owner password:\n%s", enc)
			}
		})
	}
}

func TestProtectRefusals(t *testing.T) {
	requireEngines(t)
	letter := fixtureBytes(t, "letter_3pages.pdf")
	var protected protectResult
	if err := compute(t, "pdf_protect", params{"operation": "protect", "file": letter, "user_password": "a", "owner_password": "b"}, &protected); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		p       params
		code    toolerr.Code
		message string
	}{
		{name: "not a PDF", p: params{"file": []byte("\x89PNG\r\n\x1a\n not a pdf at all")}, code: toolerr.InvalidParameters, message: "not a PDF"},
		{name: "damaged", p: params{"file": fixtureBytes(t, "damaged.pdf")}, code: toolerr.InvalidParameters, message: "not a readable PDF"},
		{name: "already encrypted", p: params{"file": protected.File}, code: toolerr.InvalidParameters, message: "already encrypted"},
		{name: "same passwords", p: params{"user_password": "same", "owner_password": "same"}, code: toolerr.InvalidParameters, message: "must differ"},
		// Refused by the input schema, before the tool runs.
		{name: "non-ASCII password", p: params{"user_password": "pässword"}, code: toolerr.InvalidParameters},
		{name: "password too long", p: params{"owner_password": strings.Repeat("x", 128)}, code: toolerr.InvalidParameters},
		{name: "no owner password", p: params{"owner_password": nil}, code: toolerr.InvalidParameters},
		{name: "empty file", p: params{"file": []byte{}}, code: toolerr.InvalidParameters, message: "not a PDF"},
		{name: "parameters too large", p: params{"file": bytes.Repeat([]byte("%PDF-"), 100_000/5)}, code: toolerr.InputLimitExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := params{"operation": "protect", "file": letter, "user_password": "user", "owner_password": "owner"}
			for k, v := range tt.p {
				if v == nil {
					delete(p, k)
				} else {
					p[k] = v
				}
			}
			var res protectResult
			wantToolError(t, compute(t, "pdf_protect", p, &res), tt.code, tt.message)
		})
	}
}

// TestProtectPasswordGuard: parameters that skip the input schema still
// meet the tool's own password check.
func TestProtectPasswordGuard(t *testing.T) {
	body, _ := json.Marshal(params{"operation": "protect", "file": []byte("%PDF-1.4"), "user_password": "ü", "owner_password": "o"})
	ctx := native.NewContext(context.Background(), "test", time.Now().Add(time.Minute), time.Second)
	_, err := computeWith(t, ctx, "pdf_protect", "protect", body)
	wantToolError(t, err, toolerr.InvalidParameters, "printable ASCII")
}

// TestProtectArguments: the passwords never reach qpdf's argument list,
// which other users can read in /proc. A qpdf on PATH records its
// arguments and runs the real one.
func TestProtectArguments(t *testing.T) {
	requireEngines(t)
	real, err := exec.LookPath("qpdf")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	argv := filepath.Join(dir, "argv")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" >> '" + argv + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "qpdf"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))

	var res protectResult
	p := params{"operation": "protect", "file": fixtureBytes(t, "letter_3pages.pdf"), "user_password": "UserPassw0rd", "owner_password": "OwnerPassw0rd"}
	if err := compute(t, "pdf_protect", p, &res); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(argv)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got, []byte("--job-json-file=job.json")) {
		t.Fatalf("the recording qpdf did not run the encryption:\n%s", got)
	}
	if bytes.Contains(got, []byte("Passw0rd")) {
		t.Fatalf("a password is on qpdf's command line:\n%s", got)
	}
}
