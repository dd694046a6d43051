package host

import (
	"errors"
	"slices"
	"strings"

	"github.com/tetratelabs/wazero/api"
)

// signature is a function type: its parameters and results.
type signature struct {
	params, results []api.ValueType
}

func (s signature) equal(o signature) bool {
	return slices.Equal(s.params, o.params) && slices.Equal(s.results, o.results)
}

// String writes the type as "(i64, i64) -> i64"; no results are "()".
func (s signature) String() string {
	var b strings.Builder
	b.WriteString("(")
	writeTypes(&b, s.params)
	b.WriteString(") -> ")
	if len(s.results) == 1 {
		b.WriteString(api.ValueTypeName(s.results[0]))
	} else {
		b.WriteString("(")
		writeTypes(&b, s.results)
		b.WriteString(")")
	}
	return b.String()
}

func writeTypes(b *strings.Builder, ts []api.ValueType) {
	for i, t := range ts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(api.ValueTypeName(t))
	}
}

// errShortModule is a module whose sections end before what they declare.
var errShortModule = errors.New("unexpected end of module")

// importSignatures reads the types of the module's function imports from
// its type and import sections: one entry per import, in the import
// section's order (the order of instrument.Info.Imports), nil for an
// import that is not a function. It reads what instrument.Rewrite has
// already decoded without error, and gives up (false) on anything it does
// not follow, such as the types of the GC proposal; the import check then
// compares names only and wazero refuses a mismatch when it instantiates.
func importSignatures(wasm []byte) ([]*signature, bool) {
	if len(wasm) < 8 {
		return nil, false
	}
	r := &wasmReader{b: wasm[8:]}
	var types []signature
	for r.more() {
		id := r.byte()
		size := r.u32()
		body := r.bytes(size)
		if r.err != nil {
			return nil, false
		}
		sr := &wasmReader{b: body}
		switch id {
		case 1: // type
			n := sr.u32()
			for range n {
				if sr.byte() != 0x60 {
					return nil, false
				}
				var sig signature
				for range sr.u32() {
					sig.params = append(sig.params, sr.byte())
				}
				for range sr.u32() {
					sig.results = append(sig.results, sr.byte())
				}
				if sr.err != nil {
					return nil, false
				}
				types = append(types, sig)
			}
		case 2: // import
			n := sr.u32()
			var out []*signature
			for range n {
				sr.bytes(sr.u32()) // module
				sr.bytes(sr.u32()) // name
				switch kind := sr.byte(); kind {
				case 0x00:
					t := sr.u32()
					if sr.err != nil || int(t) >= len(types) {
						return nil, false
					}
					out = append(out, &types[t])
				default:
					// The import check refuses a table, memory or
					// global import at the first one; later imports
					// are not looked at.
					out = append(out, nil)
					return out, sr.err == nil
				}
			}
			return out, sr.err == nil
		}
		if id > 2 && id != 0 {
			return nil, true // no import section
		}
	}
	return nil, r.err == nil
}

// wasmReader reads the binary format; the first error sticks and reads
// after it return zeros.
type wasmReader struct {
	b   []byte
	err error
}

func (r *wasmReader) more() bool { return r.err == nil && len(r.b) > 0 }

func (r *wasmReader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.err = errShortModule
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *wasmReader) u32() uint32 {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
	r.err = errShortModule
	return 0
}

func (r *wasmReader) bytes(n uint32) []byte {
	if r.err != nil || uint64(n) > uint64(len(r.b)) {
		r.err = errShortModule
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}
