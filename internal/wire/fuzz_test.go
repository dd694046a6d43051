package wire_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/toolhost/toolhost/internal/wire"
)

// FuzzDecode checks that Decode never panics on any input and that, for any
// input it accepts, decode → encode → decode gives the same value and
// encoding is idempotent (the canonical form is a fixed point).
func FuzzDecode(f *testing.F) {
	for _, dir := range []string{"valid", "invalid"} {
		files, _ := filepath.Glob(filepath.Join(vectors, dir, "*.json"))
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		v, err := wire.Decode(in, wire.Limits{})
		if err != nil {
			return
		}
		enc, err := wire.Encode(v, wire.Limits{})
		if err != nil {
			t.Fatalf("Encode of a decoded value failed: %v", err)
		}
		v2, err := wire.Decode(enc, wire.Limits{})
		if err != nil {
			t.Fatalf("Decode of canonical %q failed: %v", enc, err)
		}
		if !reflect.DeepEqual(v, v2) {
			t.Fatalf("decode → encode → decode changed the value:\n%#v\n%#v", v, v2)
		}
		enc2, err := wire.Encode(v2, wire.Limits{})
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not idempotent:\n%s\n%s (%v)", enc, enc2, err)
		}
	})
}
