package schema_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

const example = "../../testdata/examples/allocator/"

func loadExample(b *testing.B) (input, output any) {
	b.Helper()
	read := func(name string) any {
		data, err := os.ReadFile(example + name)
		if err != nil {
			b.Fatal(err)
		}
		v, err := wire.Decode(data, wire.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
	return read("input.schema.json"), read("output.schema.json")
}

// BenchmarkCheck is the profile check of the allocator example, a two-root
// discriminated union: what discovery pays once per service.
func BenchmarkCheck(b *testing.B) {
	in, out := loadExample(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := schema.Check(in, out, []string{"plan", "value"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFingerprint(b *testing.B) {
	in, out := loadExample(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := schema.Fingerprint(in, out, []string{"plan", "value"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidate validates one 50-holding plan input against the compiled
// input schema: what every item pays.
func BenchmarkValidate(b *testing.B) {
	in, _ := loadExample(b)
	v, err := schema.Compile(in)
	if err != nil {
		b.Fatal(err)
	}
	holdings := make([]any, 50)
	for i := range holdings {
		holdings[i] = map[string]any{"asset_id": "asset-" + strconv.Itoa(i), "quantity": 10, "price": 1.5}
	}
	doc := map[string]any{"operation": "plan", "contribution": 500, "holdings": holdings}
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(doc, toolerr.InvalidParameters); err != nil {
			b.Fatal(err)
		}
	}
}
