package pdf

import (
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io/fs"
	"os"
	"strconv"

	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// Limits of pdf_to_image.
const (
	// MinDPI, MaxDPI and DefaultDPI bound the resolution, in dots per inch.
	MinDPI     = 36
	MaxDPI     = 300
	DefaultDPI = 96
	// MaxPages is the most pages one item renders.
	MaxPages = 8
	// MaxPixels is the longest side of a rendered page, in pixels. pdftoppm
	// renders at most (MaxPixels+1)² pixels of a page, so a huge page
	// costs bounded memory and is refused rather than rendered.
	MaxPixels = 4096
)

// The result's JSON besides the images, over-estimated: the object around
// the pages, and each page's fields around its base64.
const (
	resultOverheadBytes = 64
	pageOverheadBytes   = 64
)

// renderInput is the parameters of pdf_to_image.
type renderInput struct {
	Operation string `json:"operation" doc:"render: render pages of the PDF as PNG images."`
	File      []byte `json:"file" doc:"The PDF, base64 (standard alphabet, padded), when it travels in the parameters (the compute route: the parameters document is at most 128 KiB, so the PDF at most about 96 KiB). Empty when the PDF is the job's input file file (up to 20 MiB): the run and jobs routes send it so. A file that needs a password to open is refused unless password opens it."`
	Password  string `json:"password,omitempty" writeOnly:"true" minLength:"1" maxLength:"127" pattern:"^[ -~]+$" doc:"The password of an encrypted file, its user or its owner password: 1 to 127 printable ASCII characters (space to ~). The file is decrypted into the item's private directory before it is rendered; a password that does not open it is refused. Ignored when the file is not encrypted."`
	DPI       *int   `json:"dpi,omitempty" minimum:"36" maximum:"300" default:"96" doc:"The resolution in dots per inch: a US Letter page (612×792 points) is 816×1056 pixels at 96 dpi. A page is at most 4096 pixels on a side."`
	FirstPage *int   `json:"first_page,omitempty" minimum:"1" maximum:"1000000" default:"1" doc:"The first page to render, counted from 1."`
	LastPage  *int   `json:"last_page,omitempty" minimum:"1" maximum:"1000000" doc:"The last page to render: at most 7 after first_page, and not past the document's last page. Default: the document's last page or first_page + 7, whichever comes first."`
}

func (in *renderInput) SelectedOperation() string { return in.Operation }

// renderOutput is the result of pdf_to_image.
type renderOutput struct {
	DPI       int            `json:"dpi" minimum:"36" maximum:"300" doc:"The resolution the pages were rendered at."`
	PageCount int            `json:"page_count" minimum:"1" doc:"The number of pages in the document: the rendered ones are a range of them."`
	Pages     []renderedPage `json:"pages" minItems:"1" maxItems:"8" doc:"The rendered pages, in order."`
}

// renderedPage is one rendered page.
type renderedPage struct {
	Page     int    `json:"page" minimum:"1" doc:"The page number, counted from 1."`
	WidthPx  int    `json:"width_px" minimum:"1" maximum:"4096" doc:"The image width in pixels."`
	HeightPx int    `json:"height_px" minimum:"1" maximum:"4096" doc:"The image height in pixels."`
	PNG      string `json:"png" doc:"The PNG image (8-bit RGB): the name of the job's output file (pages-<index>-png.png, index counted from 0 in the rendered range) when the item runs as a job, else the image itself, base64."`
}

// render renders a range of pages of in.File with pdftoppm, one engine run
// per page, stopping as soon as the result would not fit the result cap.
func render(ctx *native.Context, call native.Call, in renderInput) (renderOutput, error) {
	dpi := DefaultDPI
	if in.DPI != nil {
		dpi = *in.DPI
	}
	if dpi < MinDPI || dpi > MaxDPI {
		return renderOutput{}, native.Refuse(toolerr.InvalidParameters, "dpi must be %d to %d", MinDPI, MaxDPI)
	}
	first := 1
	if in.FirstPage != nil {
		first = *in.FirstPage
	}
	if first < 1 {
		return renderOutput{}, native.Refuse(toolerr.InvalidParameters, "first_page must be at least 1")
	}
	if in.LastPage != nil {
		last := *in.LastPage
		if last < first {
			return renderOutput{}, native.Refuse(toolerr.InvalidParameters, "last_page %d is before first_page %d", last, first)
		}
		if n := last - first + 1; n > MaxPages {
			return renderOutput{}, native.Refuse(toolerr.InvalidParameters, "pages %d to %d are %d pages; an item renders at most %d", first, last, n, MaxPages)
		}
	}
	if in.Password != "" {
		if err := checkPassword("password", in.Password); err != nil {
			return renderOutput{}, err
		}
	}
	src, err := sourceOf(call, in.File)
	if err != nil {
		return renderOutput{}, err
	}
	j, err := startJob(ctx, call, src, MaxRenderFileBytes)
	if err != nil {
		return renderOutput{}, err
	}
	defer j.close()

	if in.Password != "" {
		if err := decrypt(ctx, j, in.Password); err != nil {
			return renderOutput{}, err
		}
		if err := ctx.Checkpoint(); err != nil {
			return renderOutput{}, err
		}
	}
	count, _, err := countPages(j)
	if err != nil {
		var te *toolerr.Error
		if errors.As(err, &te) && te.Code == toolerr.InvalidParameters {
			// qpdf opens a file encrypted with an owner password alone;
			// one it cannot open may need a user password.
			if x, xerr := j.run(QPDF, "--is-encrypted", j.input); xerr == nil && x.code == 0 {
				return renderOutput{}, native.Refuse(toolerr.InvalidParameters, "file is password-protected: pass its password (parameter password) to render it")
			}
		}
		return renderOutput{}, err
	}
	if count == 0 {
		return renderOutput{}, native.Refuse(toolerr.InvalidParameters, "file has no pages")
	}
	if first > count {
		return renderOutput{}, native.Refuse(toolerr.InvalidParameters, "first_page %d is past the document's last page, %d", first, count)
	}
	last := min(first+MaxPages-1, count)
	if in.LastPage != nil {
		last = *in.LastPage
		if last > count {
			return renderOutput{}, native.Refuse(toolerr.InvalidParameters, "last_page %d is past the document's last page, %d", last, count)
		}
	}

	out := renderOutput{DPI: dpi, PageCount: count, Pages: make([]renderedPage, 0, last-first+1)}
	used := int64(resultOverheadBytes)
	for p := first; p <= last; p++ {
		if err := ctx.Checkpoint(); err != nil {
			return renderOutput{}, err
		}
		page, err := renderPage(j, dpi, p, MaxResultBytes-used-pageOverheadBytes, first)
		if err != nil {
			return renderOutput{}, err
		}
		out.Pages = append(out.Pages, page)
		used += int64(len(page.PNG)) + pageOverheadBytes
	}
	return out, ctx.Checkpoint()
}

// qpdfOpen is the part of qpdf's job JSON (qpdf --job-json-help) that opens
// an encrypted file with a password: either asking whether the password
// opens it (requiresPassword) or writing it decrypted (decrypt). The
// password travels in it, never on a command line.
type qpdfOpen struct {
	InputFile        string  `json:"inputFile"`
	Password         string  `json:"password"`
	RequiresPassword *string `json:"requiresPassword,omitempty"`
	Decrypt          *string `json:"decrypt,omitempty"`
	OutputFile       string  `json:"outputFile,omitempty"`
}

// decryptedName is the decrypted copy of the job's input.
const decryptedName = "decrypted.pdf"

// decrypt replaces the job's input, when it is encrypted, by a copy
// decrypted with password, so that pdftoppm never needs the password (its
// -upw would put it on a command line). An input that is not encrypted, or
// that qpdf cannot read, is left as it is: countPages tells which. A
// password that opens the input neither as its user nor as its owner
// password is refused; the message does not quote it.
func decrypt(ctx *native.Context, j *job, password string) error {
	flag := ""
	x, err := j.runQPDF(qpdfOpen{InputFile: j.input, Password: password, RequiresPassword: &flag})
	if err != nil {
		return err
	}
	switch x.code {
	case 0: // a password is required, and this one is not it
		return native.Refuse(toolerr.InvalidParameters, "password does not open the file: it is neither its user password nor its owner password")
	case 2: // not encrypted, or not readable
		return nil
	case 3: // encrypted, and the password opens it
	default:
		return unexpected(QPDF, x.code)
	}
	if err := ctx.Checkpoint(); err != nil {
		return err
	}
	x, err = j.runQPDF(qpdfOpen{InputFile: j.input, Password: password, Decrypt: &flag, OutputFile: decryptedName})
	if err != nil {
		return err
	}
	switch x.code {
	case 0, 3: // 3: written with warnings (damage qpdf repaired)
	case 2:
		return unreadable()
	default:
		return unexpected(QPDF, x.code)
	}
	// The job's input file stays as it is; the engines read the copy.
	j.input = j.path(decryptedName)
	return nil
}

// renderPage renders page p at dpi and checks that pdftoppm wrote a PNG of
// at most MaxPixels on a side whose base64 fits in room bytes; first is
// the range's first page, for the message of a result that does not fit.
func renderPage(j *job, dpi, p int, room int64, first int) (renderedPage, error) {
	const name = "page" // -singlefile: pdftoppm writes page.png
	crop := strconv.Itoa(MaxPixels + 1)
	x, err := j.run(PDFToPPM, "-png", "-r", strconv.Itoa(dpi),
		"-f", strconv.Itoa(p), "-l", strconv.Itoa(p), "-singlefile",
		"-x", "0", "-y", "0", "-W", crop, "-H", crop,
		j.input, name)
	if err != nil {
		return renderedPage{}, err
	}
	switch x.code {
	case 0:
	case 1:
		// pdftoppm could not open a file qpdf could read: damage that
		// poppler does not repair.
		return renderedPage{}, native.Refuse(toolerr.InvalidParameters, "file is not a PDF that pdftoppm can read: it is damaged")
	default:
		return renderedPage{}, unexpected(PDFToPPM, x.code)
	}
	defer j.remove(name + ".png")
	// The size first, from the PNG header: a page too large to render is
	// refused as such, whatever its image takes.
	cfg, err := pngConfig(j.path(name + ".png"))
	if errors.Is(err, fs.ErrNotExist) {
		return renderedPage{}, native.Refuse(toolerr.ExecutionFailed, "pdftoppm wrote no image of page %d", p)
	}
	if err != nil || cfg.Width < 1 || cfg.Height < 1 {
		return renderedPage{}, native.Refuse(toolerr.ExecutionFailed, "pdftoppm wrote an image of page %d that is not a PNG", p)
	}
	if cfg.Width > MaxPixels || cfg.Height > MaxPixels {
		if dpi > MinDPI {
			return renderedPage{}, native.Refuse(toolerr.InvalidParameters,
				"page %d is larger than %d pixels on a side at %d dpi: use a lower dpi", p, MaxPixels, dpi)
		}
		return renderedPage{}, native.Refuse(toolerr.InvalidParameters,
			"page %d is larger than %d pixels on a side even at %d dpi", p, MaxPixels, dpi)
	}
	if j.outDir != "" {
		// A job: the image is an output file, moved (same folder tree
		// or copied) from the private directory.
		outName := fmt.Sprintf("pages-%d-png.png", p-first)
		if err := j.move(name+".png", outName); err != nil {
			return renderedPage{}, err
		}
		return renderedPage{Page: p, WidthPx: cfg.Width, HeightPx: cfg.Height, PNG: outName}, nil
	}
	maxRaw := max(room, 0) / 4 * 3
	b, err := j.read(j.path(name+".png"), maxRaw, func(int64) error { return tooLarge(first, p, dpi) })
	if err != nil {
		return renderedPage{}, err
	}
	return renderedPage{Page: p, WidthPx: cfg.Width, HeightPx: cfg.Height, PNG: base64.StdEncoding.EncodeToString(b)}, nil
}

// tooLarge is the output_limit_exceeded error of pages first to p, whose
// images do not fit the result cap while pages first to p-1 do.
func tooLarge(first, p, dpi int) error {
	lower := dpi > MinDPI
	if p == first {
		if lower {
			return native.Refuse(toolerr.OutputLimitExceeded, "page %d at %d dpi does not fit the %d-byte result: use a lower dpi", p, dpi, MaxResultBytes)
		}
		return native.Refuse(toolerr.OutputLimitExceeded, "page %d does not fit the %d-byte result even at %d dpi", p, MaxResultBytes, dpi)
	}
	fit := fmt.Sprintf("pages %d to %d fit", first, p-1)
	if p-1 == first {
		fit = fmt.Sprintf("page %d fits", first)
	}
	advice := "render fewer pages (" + fit + ")"
	if lower {
		advice += " or use a lower dpi"
	}
	return native.Refuse(toolerr.OutputLimitExceeded, "pages %d to %d at %d dpi do not fit the %d-byte result: %s", first, p, dpi, MaxResultBytes, advice)
}

// pngConfig reads the signature and header of the PNG file at path.
func pngConfig(path string) (image.Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return image.Config{}, err
	}
	defer f.Close() //nolint:errcheck // read-only file: nothing to lose
	return png.DecodeConfig(f)
}
