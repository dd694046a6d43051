//go:build guestgen_dump && !guestgen && !wasip1

package guest

import "os"

// A guestgen_dump build is how guestgen derives a tool's declaration: it
// runs the tool natively (go run -tags guestgen_dump), and Register writes
// the declaration of the package it is given to the file named by
// GUESTGEN_OUT and exits, before main: exit status 0 when the declaration
// is accepted, 2 with the reason on stderr when it is refused.

func init() { dumpHook = dump }

func dump(p Package) {
	doc, err := declare(p)
	if err != nil {
		os.Stderr.WriteString("guestgen: the declaration is refused: " + err.Error() + "\n")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Getenv("GUESTGEN_OUT"), doc, 0o644); err != nil {
		os.Stderr.WriteString("guestgen: " + err.Error() + "\n")
		os.Exit(1)
	}
	os.Exit(0)
}
