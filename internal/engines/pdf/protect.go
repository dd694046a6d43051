package pdf

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// MaxPasswordLength is the longest password, in characters: AES-256 PDF
// encryption (revision 6) uses the first 127 bytes of a password and
// ignores the rest.
const MaxPasswordLength = 127

// protectInput is the parameters of pdf_protect.
type protectInput struct {
	Operation     string `json:"operation" doc:"protect: encrypt the PDF with AES-256."`
	File          []byte `json:"file" doc:"The PDF, base64 (standard alphabet, padded), when it travels in the parameters (the compute route: the parameters document is at most 128 KiB, so the PDF at most about 96 KiB). Empty when the PDF is the job's input file file (up to 50 MiB): the run and jobs routes send it so. It must not be encrypted already."`
	UserPassword  string `json:"user_password" writeOnly:"true" minLength:"1" maxLength:"127" pattern:"^[ -~]+$" doc:"The password that opens the document: 1 to 127 printable ASCII characters (space to ~)."`
	OwnerPassword string `json:"owner_password" writeOnly:"true" minLength:"1" maxLength:"127" pattern:"^[ -~]+$" doc:"The password that gives full access and lifts the restrictions: 1 to 127 printable ASCII characters, different from user_password."`
	AllowPrint    *bool  `json:"allow_print,omitempty" default:"true" doc:"Whether a reader opening the document with the user password may print it (at full resolution)."`
	AllowModify   *bool  `json:"allow_modify,omitempty" default:"true" doc:"Whether a reader opening the document with the user password may change it (pages, forms, annotations, content)."`
	AllowExtract  *bool  `json:"allow_extract,omitempty" default:"true" doc:"Whether a reader opening the document with the user password may copy text and graphics out of it."`
}

func (in *protectInput) SelectedOperation() string { return in.Operation }

// protectOutput is the result of pdf_protect.
type protectOutput struct {
	File      string `json:"file" doc:"The encrypted PDF — AES-256 (PDF 2.0 security handler, revision 6) for strings, streams and embedded files: the name of the job's output file (file.pdf) when the item runs as a job, else the PDF itself, base64."`
	SizeBytes int64  `json:"size_bytes" minimum:"1" doc:"The size of the encrypted PDF in bytes (decoded)."`
	PageCount int    `json:"page_count" minimum:"0" doc:"The number of pages in the document."`
	Repaired  bool   `json:"repaired" doc:"Whether qpdf found damage in the input and wrote a repaired file (qpdf exit status 3)."`
}

// qpdfJob is the part of qpdf's job JSON (qpdf --job-json-help) that
// encrypts a file: the passwords travel in it, never on a command line.
type qpdfJob struct {
	InputFile  string `json:"inputFile"`
	OutputFile string `json:"outputFile"`
	Encrypt    struct {
		UserPassword  string `json:"userPassword"`
		OwnerPassword string `json:"ownerPassword"`
		AES256        struct {
			Print   string `json:"print"`
			Modify  string `json:"modify"`
			Extract string `json:"extract"`
		} `json:"256bit"`
	} `json:"encrypt"`
}

// protect encrypts in.File with qpdf in three steps: refuse a file that is
// already encrypted (re-encrypting would drop its owner's restrictions),
// count its pages (a file qpdf cannot read is the caller's), then encrypt.
func protect(ctx *native.Context, call native.Call, in protectInput) (protectOutput, error) {
	if err := checkPassword("user_password", in.UserPassword); err != nil {
		return protectOutput{}, err
	}
	if err := checkPassword("owner_password", in.OwnerPassword); err != nil {
		return protectOutput{}, err
	}
	if in.UserPassword == in.OwnerPassword {
		// A reader given the user password would get owner access: the
		// restrictions would mean nothing.
		return protectOutput{}, native.Refuse(toolerr.InvalidParameters, "owner_password must differ from user_password")
	}
	src, err := sourceOf(call, in.File)
	if err != nil {
		return protectOutput{}, err
	}
	j, err := startJob(ctx, call, src, MaxProtectFileBytes)
	if err != nil {
		return protectOutput{}, err
	}
	defer j.close()

	x, err := j.run(QPDF, "--is-encrypted", j.input)
	if err != nil {
		return protectOutput{}, err
	}
	switch x.code {
	case 0:
		return protectOutput{}, native.Refuse(toolerr.InvalidParameters, "file is already encrypted: remove its encryption first")
	case 2: // not encrypted, or not readable: --show-npages tells
	default:
		return protectOutput{}, unexpected(QPDF, x.code)
	}
	if err := ctx.Checkpoint(); err != nil {
		return protectOutput{}, err
	}
	pages, repaired, err := countPages(j)
	if err != nil {
		return protectOutput{}, err
	}
	if err := ctx.Checkpoint(); err != nil {
		return protectOutput{}, err
	}

	var spec qpdfJob
	outPath := j.output(protectedName)
	spec.InputFile, spec.OutputFile = j.input, outPath
	spec.Encrypt.UserPassword, spec.Encrypt.OwnerPassword = in.UserPassword, in.OwnerPassword
	spec.Encrypt.AES256.Print = choose(in.AllowPrint, "full", "none")
	spec.Encrypt.AES256.Modify = choose(in.AllowModify, "all", "none")
	spec.Encrypt.AES256.Extract = choose(in.AllowExtract, "y", "n")
	x, err = j.runQPDF(spec)
	if err != nil {
		return protectOutput{}, err
	}
	switch x.code {
	case 0:
	case 3:
		repaired = true
	default:
		// The input was readable a moment ago: a failure to write is not
		// the caller's.
		return protectOutput{}, unexpected(QPDF, x.code)
	}
	if err := ctx.Checkpoint(); err != nil {
		return protectOutput{}, err
	}
	if j.outDir != "" {
		// A job: the file is the output, written where it is.
		size, err := checkPDF(outPath)
		if err != nil {
			return protectOutput{}, err
		}
		return protectOutput{File: protectedName, SizeBytes: size, PageCount: pages, Repaired: repaired}, nil
	}
	// The result holds the file as base64 and a few small fields.
	maxOut := int64(MaxResultBytes-128) / 4 * 3
	out, err := j.read(outPath, maxOut, func(size int64) error {
		return native.Refuse(toolerr.OutputLimitExceeded, "the encrypted PDF takes %d bytes; a result holds at most %d as base64", size, maxOut)
	})
	if err != nil {
		return protectOutput{}, err
	}
	if !bytes.HasPrefix(out, []byte("%PDF-")) {
		return protectOutput{}, native.Refuse(toolerr.ExecutionFailed, "qpdf wrote a file that is not a PDF")
	}
	return protectOutput{File: base64.StdEncoding.EncodeToString(out), SizeBytes: int64(len(out)), PageCount: pages, Repaired: repaired}, nil
}

// protectedName is the name of pdf_protect's output file in a job.
const protectedName = "file.pdf"

// checkPDF returns the size of the file qpdf wrote at path, refusing one
// that does not start as a PDF.
func checkPDF(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, native.Refuse(toolerr.ExecutionFailed, "qpdf wrote no file")
	}
	defer f.Close() //nolint:errcheck // read-only file: nothing to lose
	head := make([]byte, 5)
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, []byte("%PDF-")) {
		return 0, native.Refuse(toolerr.ExecutionFailed, "qpdf wrote a file that is not a PDF")
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("reading the output: %w", err)
	}
	return fi.Size(), nil
}

// countPages returns the page count of the job's input and whether qpdf
// warned while reading it (damage it recovered from). An input qpdf cannot
// read is invalid_parameters.
func countPages(j *job) (pages int, warned bool, err error) {
	x, err := j.run(QPDF, "--show-npages", j.input)
	if err != nil {
		return 0, false, err
	}
	switch x.code {
	case 0, 3:
	case 2:
		return 0, false, unreadable()
	default:
		return 0, false, unexpected(QPDF, x.code)
	}
	n, err := strconv.Atoi(string(bytes.TrimSpace(x.stdout)))
	if err != nil || n < 0 {
		return 0, false, native.Refuse(toolerr.ExecutionFailed, "qpdf printed no page count")
	}
	return n, x.code == 3, nil
}

// unreadable returns the tool error of a file qpdf cannot read.
func unreadable() error {
	return native.Refuse(toolerr.InvalidParameters, "file is not a readable PDF: it is damaged beyond repair or not a PDF")
}

// checkPassword refuses a password the input schema refuses: the schema
// has been checked, so this is a guard for direct callers. Passwords are
// printable ASCII because readers prepare non-ASCII passwords (SASLprep,
// PDF 2.0) in ways qpdf does not, and such a file might not open
// elsewhere.
func checkPassword(field, p string) error {
	if len(p) < 1 || len(p) > MaxPasswordLength {
		return native.Refuse(toolerr.InvalidParameters, "%s must be 1 to %d characters", field, MaxPasswordLength)
	}
	for i := 0; i < len(p); i++ {
		if p[i] < ' ' || p[i] > '~' {
			return native.Refuse(toolerr.InvalidParameters, "%s must be printable ASCII (space to ~)", field)
		}
	}
	return nil
}

// choose returns yes when the optional permission p is absent or true.
func choose(p *bool, yes, no string) string {
	if p == nil || *p {
		return yes
	}
	return no
}
