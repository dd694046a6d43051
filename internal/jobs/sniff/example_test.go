package sniff_test

import (
	"fmt"

	"github.com/toolhost/toolhost/internal/jobs/sniff"
)

// A file's name says nothing: a PNG called report.pdf is a PNG, and a PDF
// tool refuses it.
func ExampleDetect() {
	upload := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR") // "report.pdf"
	t := sniff.Detect(upload)
	fmt.Println(t, sniff.Accepts([]string{"application/pdf"}, t))
	fmt.Println(sniff.Detect([]byte("%PDF-1.7\n")))
	// Output:
	// image/png false
	// application/pdf
}
