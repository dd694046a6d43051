package main

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// version returns the main module's version as the Go toolchain stamped it,
// or "devel" for a build outside a tagged module.
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}

// versionLine is what `toolhost version` prints: the version, the commit
// the binary was built from (with "+modified" for a tree with changes)
// when the toolchain stamped it, and the Go version.
func versionLine() string {
	parts := []string{"toolhost", version()}
	if info, ok := debug.ReadBuildInfo(); ok {
		var rev, modified string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" && !strings.HasSuffix(version(), "+dirty") {
					modified = "+modified"
				}
			}
		}
		if rev != "" {
			parts = append(parts, "commit", rev[:min(12, len(rev))]+modified)
		}
	}
	return strings.Join(append(parts, runtime.Version()), " ")
}
