// Package engines lists the native tool packages compiled into the binary.
// The server registers them as builtins (their Runner is the supervisor's)
// and the worker child computes them; both take the list from here, so the
// two sides always agree on what a package declares.
package engines

import (
	"github.com/toolhost/toolhost/internal/engines/netprobe"
	"github.com/toolhost/toolhost/internal/engines/pac"
	"github.com/toolhost/toolhost/internal/engines/pdf"
	"github.com/toolhost/toolhost/internal/native"
)

// Packages returns the native packages, in a fixed order. The network
// probes are among them because the guard protects every route that runs
// them (they need tools.net.probe; see docs/guard.md).
func Packages() []*native.Package {
	return []*native.Package{netprobe.Package(), pac.Package(), pdf.Package()}
}
