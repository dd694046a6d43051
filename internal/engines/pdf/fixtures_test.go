package pdf_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

var update = flag.Bool("update", false, "regenerate the PDF fixtures in testdata/pdf")

// fixtureDir holds the PDF fixtures, shared with other packages' tests and
// examples.
var fixtureDir = filepath.Join("..", "..", "..", "testdata", "pdf")

// page is one page of a generated PDF.
type page struct {
	// width and height are the media box in points.
	width, height int
	// rotate is the page's /Rotate.
	rotate int
	// content is the content stream; it may use the font /F1 and, when
	// the document has one, the image /Im1.
	content string
}

// doc is a generated PDF.
type doc struct {
	pages []page
	// image, when set, is a DeviceRGB image of imageSide² pixels that
	// every page can draw as /Im1.
	image     []byte
	imageSide int
}

// bytes writes d as a PDF 1.4 file with a classic cross-reference table:
// the catalog, the page tree, a Helvetica font, the image, then each page
// and its content stream.
func (d doc) bytes() []byte {
	var b bytes.Buffer
	var offsets []int
	obj := func(body string) int {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
		return len(offsets)
	}
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	const catalog, pages, font, image = 1, 2, 3, 4
	firstPage := 4
	if d.image != nil {
		firstPage = 5
	}
	obj(fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pages))
	var kids bytes.Buffer
	for i := range d.pages {
		fmt.Fprintf(&kids, "%d 0 R ", firstPage+2*i)
	}
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", bytes.TrimSpace(kids.Bytes()), len(d.pages)))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	resources := fmt.Sprintf("<< /Font << /F1 %d 0 R >> >>", font)
	if d.image != nil {
		obj(fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 /Length %d >>\nstream\n%s\nendstream",
			d.imageSide, d.imageSide, len(d.image), d.image))
		resources = fmt.Sprintf("<< /Font << /F1 %d 0 R >> /XObject << /Im1 %d 0 R >> >>", font, image)
	}
	for i, p := range d.pages {
		rotate := ""
		if p.rotate != 0 {
			rotate = fmt.Sprintf(" /Rotate %d", p.rotate)
		}
		obj(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %d %d]%s /Resources %s /Contents %d 0 R >>",
			pages, p.width, p.height, rotate, resources, firstPage+2*i+1))
		obj(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(p.content), p.content))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, catalog, xref)
	return b.Bytes()
}

// labelled is a page with a blue block and its number in large type.
func labelled(width, height, rotate, n int) page {
	return page{width: width, height: height, rotate: rotate,
		content: fmt.Sprintf("0 0 1 rg 36 36 %d %d re f 0 g BT /F1 %d Tf 36 %d Td (Page %d) Tj ET",
			width/3, height/4, min(width, height)/8, height*3/4, n)}
}

// fixture is one file of testdata/pdf and what qpdf --check says of it.
type fixture struct {
	name string
	data []byte
	// qpdfCheck is qpdf --check's exit status: 0 sound, 3 repaired with
	// warnings, 2 unreadable.
	qpdfCheck int
}

// fixtures returns the PDF fixtures, generated.
func fixtures() []fixture {
	var letter doc
	for n := 1; n <= 3; n++ {
		letter.pages = append(letter.pages, labelled(612, 792, 0, n))
	}
	mixed := doc{pages: []page{labelled(595, 842, 0, 1), labelled(842, 595, 0, 2), labelled(612, 792, 90, 3)}}
	var small doc
	for n := 1; n <= 10; n++ {
		small.pages = append(small.pages, labelled(144, 144, 0, n))
	}
	// Noise: an image of random pixels across each page, so the pages'
	// PNGs compress badly.
	noise := doc{imageSide: 96}
	rng := rand.New(rand.NewPCG(5, 5))
	noise.image = make([]byte, 3*noise.imageSide*noise.imageSide)
	for i := range noise.image {
		noise.image[i] = byte(rng.UintN(256))
	}
	for range 8 {
		noise.pages = append(noise.pages, page{width: 612, height: 792, content: "q 612 0 0 792 0 0 cm /Im1 Do Q"})
	}
	huge := doc{pages: []page{labelled(14400, 14400, 0, 1)}}
	empty := doc{}

	letterPDF := letter.bytes()
	// Damaged beyond repair: the file cut before its first page's content,
	// so it has neither objects enough nor a trailer.
	damaged := letterPDF[:bytes.Index(letterPDF, []byte("5 0 obj"))]
	// Damaged but repairable: startxref points nowhere.
	badXref := bytes.Replace(letterPDF, []byte("startxref\n"+strconv.Itoa(bytes.Index(letterPDF, []byte("xref\n0 ")))),
		[]byte("startxref\n17"), 1)
	return []fixture{
		{name: "letter_3pages.pdf", data: letterPDF},
		{name: "mixed_sizes.pdf", data: mixed.bytes()},
		{name: "small_10pages.pdf", data: small.bytes()},
		{name: "noise_8pages.pdf", data: noise.bytes()},
		{name: "huge_page.pdf", data: huge.bytes()},
		{name: "no_pages.pdf", data: empty.bytes()},
		{name: "damaged.pdf", data: damaged, qpdfCheck: 2},
		{name: "bad_xref.pdf", data: badXref, qpdfCheck: 3},
	}
}

// TestFixtures holds testdata/pdf to the generator (go test -run
// TestFixtures -update rewrites it) and checks each file with qpdf.
func TestFixtures(t *testing.T) {
	for _, f := range fixtures() {
		t.Run(f.name, func(t *testing.T) {
			if len(f.data) >= 50<<10 {
				t.Fatalf("%d bytes: fixtures stay under 50 KiB", len(f.data))
			}
			path := filepath.Join(fixtureDir, f.name)
			if *update {
				if err := os.MkdirAll(fixtureDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, f.data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -run TestFixtures -update writes it)", err)
			}
			if !bytes.Equal(got, f.data) {
				t.Fatalf("%s differs from the generator (go test -run TestFixtures -update rewrites it)", path)
			}
			requireEngines(t)
			if code := exitCode(t, exec.Command("qpdf", "--check", path)); code != f.qpdfCheck {
				t.Errorf("qpdf --check exit status %d, want %d", code, f.qpdfCheck)
			}
		})
	}
}

// fixtureBytes returns the fixture file name.
func fixtureBytes(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatalf("%v (go test -run TestFixtures -update writes it)", err)
	}
	return b
}

// exitCode runs cmd and returns its exit status; a command that cannot
// run fails the test.
func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Run()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("running %s: %v", cmd.Path, err)
	}
	return ee.ExitCode()
}
