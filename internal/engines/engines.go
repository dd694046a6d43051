// Package engines lists the native tool packages compiled into the binary.
// The server registers them as builtins (their Runner is the supervisor's)
// and the worker child computes them; both take the list from here, so the
// two sides always agree on what a package declares.
package engines

import (
	"toolhost/internal/engines/pac"
	"toolhost/internal/engines/pdf"
	"toolhost/internal/native"
)

// Packages returns the native packages, in a fixed order.
func Packages() []*native.Package {
	return []*native.Package{pac.Package(), pdf.Package()}
}
