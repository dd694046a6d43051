// Command gopdk is an ordinary Extism plugin built with the standard Go
// toolchain as a WASI reactor (GOOS=wasip1 GOARCH=wasm
// -buildmode=c-shared) on the Extism Go PDK. It knows nothing of
// Toolhost: its sidecar manifest (gopdk.tool.json) maps each service's
// operation to one of its exports, and the differential test of
// internal/extismcompat runs it through go-sdk and through Toolhost.
//
// It has its own go.mod so that the root module does not depend on
// go-pdk.
package main

import (
	"errors"
	"strconv"

	"github.com/extism/go-pdk"
)

// countVowels reads raw text and outputs {"count":N}, the number of the
// vowels a, e, i, o and u in it, either case.
//
//go:wasmexport count_vowels
func countVowels() int32 {
	n := 0
	for _, c := range pdk.Input() {
		switch c | 0x20 {
		case 'a', 'e', 'i', 'o', 'u':
			n++
		}
	}
	pdk.OutputString(`{"count":` + strconv.Itoa(n) + `}`)
	return 0
}

// reverse reads raw UTF-8 text and outputs it reversed, rune by rune.
//
//go:wasmexport reverse
func reverse() int32 {
	r := []rune(pdk.InputString())
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	pdk.OutputString(string(r))
	return 0
}

// refuse fails with a plain-text error (not a Toolhost tool error
// document): the error names the input's length, never its content.
//
//go:wasmexport refuse
func refuse() int32 {
	pdk.SetError(errors.New("refused: " + strconv.Itoa(len(pdk.Input())) + " bytes of input are not welcome here"))
	return 1
}

// greet outputs the configuration value "greeting" (or "hello" when it is
// not set), a comma, a space and the raw text input.
//
//go:wasmexport greet
func greet() int32 {
	greeting, ok := pdk.GetConfig("greeting")
	if !ok {
		greeting = "hello"
	}
	pdk.OutputString(greeting + ", " + pdk.InputString())
	return 0
}

// remember stores the input in the variable "last" and the input's length
// in "length", reads both back within the same call, and outputs
// {"last":…,"length":N}. A host that ignores var_set outputs
// {"last":"","length":0}.
//
//go:wasmexport remember
func remember() int32 {
	in := pdk.Input()
	pdk.SetVar("last", in)
	pdk.SetVarInt("length", len(in))
	last := pdk.GetVar("last")
	length := pdk.GetVarInt("length")
	if err := pdk.OutputJSON(memory{Last: string(last), Length: length}); err != nil {
		pdk.SetError(err)
		return 1
	}
	return 0
}

// sum reads a JSON document {"numbers":[…]} and outputs {"sum":N}: JSON
// in, JSON out (the sidecar's default mappings).
//
//go:wasmexport sum
func sum() int32 {
	var in struct {
		Numbers []int64 `json:"numbers"`
	}
	if err := pdk.InputJSON(&in); err != nil {
		pdk.SetError(err)
		return 1
	}
	var total int64
	for _, n := range in.Numbers {
		total += n
	}
	if err := pdk.OutputJSON(map[string]int64{"sum": total}); err != nil {
		pdk.SetError(err)
		return 1
	}
	return 0
}

// memory is remember's output.
type memory struct {
	Last   string `json:"last"`
	Length int    `json:"length"`
}

func main() {}
