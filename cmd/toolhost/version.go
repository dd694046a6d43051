package main

import "runtime/debug"

// version returns the main module's version as the Go toolchain stamped it,
// or "devel" for a build outside a tagged module.
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}
