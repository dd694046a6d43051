package wire_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/wire"
)

// benchDocument is a ~100 KiB object shaped like tool parameters: nested
// records with strings, numbers and arrays.
func benchDocument() []byte {
	var sb strings.Builder
	sb.WriteString(`{"operation":"plan","items":[`)
	for i := range 600 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":"asset-%d","name":"Fondo Azionario Europa %d","weight":%d.125,"price":1.5e2,"tags":["equity","eur","é"]}`, i, i, i%97)
	}
	sb.WriteString(`]}`)
	return []byte(sb.String())
}

func BenchmarkDecode(b *testing.B) {
	doc := benchDocument()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := wire.Decode(doc, wire.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	doc := benchDocument()
	v, err := wire.Decode(doc, wire.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		if buf, err = wire.Append(buf[:0], v, wire.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStdlibDecode is the baseline: encoding/json into any with
// UseNumber, which checks none of the refusals above.
func BenchmarkStdlibDecode(b *testing.B) {
	doc := benchDocument()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		var v any
		d := json.NewDecoder(strings.NewReader(string(doc)))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeSmall is a run route's body (issue 13): the common,
// plain case of the request path.
func BenchmarkDecodeSmall(b *testing.B) {
	doc := []byte(`{"input":{"operation":"digest","text":"abc","algorithm":"sha256"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := wire.Decode(doc, wire.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
