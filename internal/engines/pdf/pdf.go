// Package pdf is the native tool package of the PDF tools: pdf_protect
// encrypts a PDF with AES-256 through qpdf, and pdf_to_image renders its
// pages as PNG images through pdftoppm (poppler-utils).
//
// Through the API they are job tools: the job's input file "file" reaches
// the worker as a file (native.Call.Files, by path in the job's folder,
// read-only; the parameters' "file" is then empty), at most
// [MaxProtectFileBytes] or [MaxRenderFileBytes], and the output files are
// written straight into the job's output folder (native.Call.OutDir), the
// result naming them (file.pdf, pages-<i>-png.png). Called without files
// (the compute route) they take the PDF base64 in the parameters and
// return their output base64 in the result, so the platform's byte caps
// bound them: at most [MaxFileBytes] of PDF in, at most [MaxResultBytes]
// of result out.
//
// Each item runs its engines inside the item's one claimed engine window
// (native.Context.ClaimEngineWindow), in a private directory inside the
// item's scratch folder (native.Context.ScratchDir) that is removed before
// Compute returns, with a minimal environment and bounded
// captured output. Passwords reach qpdf through a job file readable by the
// worker's user alone, never on a command line; pdf_to_image renders an
// encrypted file from a copy qpdf decrypted in the private directory, so
// pdftoppm never sees a password. Nothing here logs.
//
// An input the engines cannot use (not a PDF, damaged beyond repair,
// password-protected and given no password or a wrong one, a range past
// its pages) is the caller's: a tool error invalid_parameters with a short
// message. An engine that crashes or exits
// unexpectedly is execution_failed; one that outlives its engine window is
// execution_limit (retryable).
package pdf

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// Name is the package name: "builtin/pdf" in sources and failures.
const Name = "pdf"

// The engines the package runs, looked up on PATH.
const (
	QPDF     = "qpdf"
	PDFToPPM = "pdftoppm"
)

// Limits of both services.
const (
	// MaxParameterBytes and MaxResultBytes are what every operation
	// declares: the platform's caps on an item's parameters and result.
	MaxParameterBytes = 128 << 10
	MaxResultBytes    = 256 << 10
	// MaxFileBytes bounds the PDF either service takes in its parameters
	// (the compute route): the base64 of a larger file does not fit the
	// parameter cap. The other parameters share the cap, so the largest
	// file that fits is a little smaller.
	MaxFileBytes = MaxParameterBytes / 4 * 3
	// MaxProtectFileBytes and MaxRenderFileBytes bound the PDF each
	// service takes as a job file (the run and jobs routes): the upload
	// limit its descriptor declares (files[].maxBytes), which the jobs
	// subsystem enforces while it reads the upload, and which the engine
	// checks again before it starts.
	MaxProtectFileBytes = 50 << 20
	MaxRenderFileBytes  = 20 << 20
)

// The versions every service declares.
const (
	ContractVersion       = "1.0.0"
	ImplementationVersion = "1.0.0"
	// uiVersion is the version of every service's UI descriptor and
	// documentation page.
	uiVersion = "1.0.0"
)

// category is every service's category (the ADR family).
const category = "pdf"

var (
	// ErrUnknownService is returned by the package's Compute when the call
	// names a service or an operation the package does not declare.
	ErrUnknownService = errors.New("pdf: unknown service or operation")
)

// Package returns the PDF tool package. The declaration is built once and
// shared by every returned Package: callers must not modify its bytes.
func Package() *native.Package {
	decl, err := declaration()
	if err != nil {
		// The declaration is static: a failure is a programming error,
		// and TestDeclaration catches it.
		panic(fmt.Sprintf("pdf: declaring the package: %v", err))
	}
	return &native.Package{
		Name:        Name,
		Declaration: decl,
		Engines:     []string{QPDF, PDFToPPM},
		Compute:     compute,
	}
}

var declaration = sync.OnceValues(func() ([]byte, error) {
	return guest.Package{
		ContractVersion:       ContractVersion,
		ImplementationVersion: ImplementationVersion,
		Services: []guest.Declaration{
			native.Service[protectInput, protectOutput]("pdf_protect", category, uiVersion, protectTexts, guest.Operation{
				Name:              "protect",
				MaxParameterBytes: MaxParameterBytes, MaxResultBytes: MaxResultBytes,
				EngineTimeoutMS: protectEngineTimeout.Milliseconds(), SoftTimeoutMS: 7_000, HardTimeoutMS: 9_000,
				MemoryLimitBytes: 256 << 20,
			}, platform("protect", "protect-pdf", 2, MaxProtectFileBytes)),
			native.Service[renderInput, renderOutput]("pdf_to_image", category, uiVersion, renderTexts, guest.Operation{
				Name: "render", Deterministic: true,
				MaxParameterBytes: MaxParameterBytes, MaxResultBytes: MaxResultBytes,
				EngineTimeoutMS: renderEngineTimeout.Milliseconds(), SoftTimeoutMS: 17_000, HardTimeoutMS: 19_000,
				RequestTimeoutMS: 30_000, ClientTimeoutMS: 35_000,
				MemoryLimitBytes: 512 << 20,
			}, platform("render", "pdf-to-image", 4, MaxRenderFileBytes)),
		},
	}.Declaration()
})

// The engine budgets: protect runs three short qpdf commands, render one
// to three qpdf commands (two more to decrypt a file with its password) and
// one pdftoppm command per page.
const (
	protectEngineTimeout = 5 * time.Second
	renderEngineTimeout  = 15 * time.Second
	// postEngineReserve is what an item needs after its engines: reading
	// at most 256 KiB of output, encoding it, and the worker's output
	// validation.
	postEngineReserve = 500 * time.Millisecond
)

// JobType is the job type both services' runs submit (ADR-027): a job of
// type "pdf" whose input's tool is the operation, protect or render.
const JobType = "pdf"

// QuotaClass is the quota class of both services: job work.
const QuotaClass = "tools-job"

// platform returns the tools-platform fields of a PDF service (ADR-027):
// a job tool whose run submits a job of type "pdf" for operation op, taking
// one PDF as the file "file" and producing files; heavy work, so anonymous
// callers are refused; reached from the legacy /api/process routes by the
// legacy tool name selector.
//
// The job handler hands the job's files to the worker as files (the
// package documentation), so the file is bounded by maxFileBytes, not by
// the parameter cap.
func platform(op, selector string, cost int, maxFileBytes int64) *guest.Platform {
	return &guest.Platform{
		Execution:     "job",
		Job:           &guest.Job{Type: JobType, Operation: op},
		Files:         []guest.FileInput{{Name: "file", Types: []string{"application/pdf"}, MaxBytes: maxFileBytes}},
		OutputFiles:   true,
		RequireCaller: true,
		QuotaClass:    QuotaClass,
		Cost:          cost,
		Legacy: []guest.LegacyRoute{
			{Method: "POST", Path: "/api/process", Operation: op, Selector: selector},
			{Method: "POST", Path: "/api/process/direct", Operation: op, Selector: selector},
			{Method: "POST", Path: "/api/process/multi", Operation: op, Selector: selector},
		},
	}
}

var protectTexts = map[string]guest.Text{
	"en": {Name: "Protect PDF", Description: "Encrypt a PDF with AES-256: a user password to open it, an owner password to change its permissions (printing, changes, copying)."},
	"it": {Name: "Proteggi PDF", Description: "Cifra un PDF con AES-256: una password utente per aprirlo e una password proprietario per cambiarne i permessi (stampa, modifiche, copia)."},
	"fr": {Name: "Protéger un PDF", Description: "Chiffrer un PDF en AES-256 : un mot de passe utilisateur pour l'ouvrir, un mot de passe propriétaire pour modifier ses autorisations (impression, modifications, copie)."},
	"es": {Name: "Proteger PDF", Description: "Cifra un PDF con AES-256: una contraseña de usuario para abrirlo y una contraseña de propietario para cambiar sus permisos (impresión, cambios, copia)."},
}

var renderTexts = map[string]guest.Text{
	"en": {Name: "PDF to image", Description: "Render the pages of a PDF as PNG images at 36 to 300 dpi, up to 8 pages at a time."},
	"it": {Name: "Da PDF a immagine", Description: "Converte le pagine di un PDF in immagini PNG da 36 a 300 dpi, fino a 8 pagine alla volta."},
	"fr": {Name: "PDF en image", Description: "Convertir les pages d'un PDF en images PNG de 36 à 300 dpi, jusqu'à 8 pages à la fois."},
	"es": {Name: "PDF a imagen", Description: "Convierte las páginas de un PDF en imágenes PNG de 36 a 300 ppp, hasta 8 páginas a la vez."},
}

// compute is the package's Compute: it decodes the parameters strictly
// into the input type of the called service and runs it.
func compute(ctx *native.Context, call native.Call) ([]byte, error) {
	switch {
	case call.ToolCode == "pdf_protect" && call.Operation == "protect":
		var in protectInput
		if err := call.DecodeParameters(&in); err != nil {
			return nil, err
		}
		out, err := protect(ctx, call, in)
		if err != nil {
			return nil, err
		}
		return native.EncodeResult(out, MaxResultBytes)
	case call.ToolCode == "pdf_to_image" && call.Operation == "render":
		var in renderInput
		if err := call.DecodeParameters(&in); err != nil {
			return nil, err
		}
		out, err := render(ctx, call, in)
		if err != nil {
			return nil, err
		}
		return native.EncodeResult(out, MaxResultBytes)
	}
	return nil, fmt.Errorf("computing %s/%s: %w", call.ToolCode, call.Operation, ErrUnknownService)
}

// limit returns the retryable execution_limit error with a message.
func limit(format string, args ...any) *toolerr.Error {
	e := toolerr.New(toolerr.ExecutionLimit)
	e.Message = native.Clip(fmt.Sprintf(format, args...), guest.MaxMessageBytes)
	return e
}

// checkHeader refuses a file that is not a PDF: one without the "%PDF-"
// header in its first 1024 bytes, where readers look for it.
func checkHeader(file []byte) error {
	if len(file) > MaxFileBytes {
		return native.Refuse(toolerr.InvalidParameters, "file takes %d bytes; the limit is %d", len(file), MaxFileBytes)
	}
	if !bytes.Contains(file[:min(len(file), 1024)], []byte("%PDF-")) {
		return native.Refuse(toolerr.InvalidParameters, "file is not a PDF: no %%PDF- header in its first 1024 bytes")
	}
	return nil
}
