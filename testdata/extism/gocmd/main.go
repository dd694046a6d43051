// Command gocmd is an Extism plugin built as a WASI command module
// (GOOS=wasip1 GOARCH=wasm, a plain go build: the module exports _start,
// which runs main). It reads its input through the Extism Go PDK, outputs
// it in upper case and exits 0; an empty input makes it exit 3 without an
// output. Its sidecar manifest (gocmd.tool.json) maps the operation
// "shout" to the export _start.
package main

import (
	"os"
	"strings"

	"github.com/extism/go-pdk"
)

func main() {
	in := pdk.InputString()
	if in == "" {
		os.Exit(3)
	}
	pdk.OutputString(strings.ToUpper(in))
}
