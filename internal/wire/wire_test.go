package wire_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/wire"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/canonical")

const vectors = "../../testdata/canonical"

// refusals maps the prefix of an invalid vector's file name to the error it
// must produce.
var refusals = map[string]error{
	"duplicate_name":  wire.ErrDuplicateName,
	"invalid_utf8":    wire.ErrInvalidUTF8,
	"lone_surrogate":  wire.ErrLoneSurrogate,
	"byte_order_mark": wire.ErrByteOrderMark,
	"non_finite":      wire.ErrNonFinite,
	"too_deep":        wire.ErrTooDeep,
	"trailing_data":   wire.ErrTrailingData,
	"syntax":          wire.ErrSyntax,
}

func TestGoldenCanonical(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(vectors, "valid", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no valid vectors: %v", err)
	}
	for _, file := range files {
		if strings.HasSuffix(file, ".canonical.json") {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			v, err := wire.Decode(in, wire.Limits{})
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			got, err := wire.Encode(v, wire.Limits{})
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			golden := strings.TrimSuffix(file, ".json") + ".canonical.json"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("reading golden file (run with -update to create it): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("canonical encoding\n got: %s\nwant: %s", got, want)
			}
			// The canonical form is a fixed point.
			again, err := wire.Decode(got, wire.Limits{})
			if err != nil {
				t.Fatalf("Decode(canonical): %v", err)
			}
			if re, _ := wire.Encode(again, wire.Limits{}); !bytes.Equal(re, got) {
				t.Errorf("re-encoding changed the canonical form:\n%s\n%s", got, re)
			}
		})
	}
}

func TestGoldenRefusals(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(vectors, "invalid", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no invalid vectors: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			want, ok := refusals[strings.SplitN(name, "-", 2)[0]]
			if !ok {
				t.Fatalf("vector name %q has no known refusal prefix", name)
			}
			in, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			v, err := wire.Decode(in, wire.Limits{})
			if !errors.Is(err, want) {
				t.Fatalf("Decode = %v, %v; want %v", v, err, want)
			}
			var we *wire.Error
			if !errors.As(err, &we) || we.Offset < 0 || we.Offset > int64(len(in)) {
				t.Errorf("error %v carries no offset within the input", err)
			}
		})
	}
}

func TestDecodeLimits(t *testing.T) {
	tests := []struct {
		name string
		in   string
		lim  wire.Limits
		want error
	}{
		{name: "at byte limit", in: `[1,2]`, lim: wire.Limits{MaxBytes: 5}},
		{name: "over byte limit", in: `[1,2] `, lim: wire.Limits{MaxBytes: 5}, want: wire.ErrTooLarge},
		{name: "depth 1 allowed", in: `[]`, lim: wire.Limits{MaxDepth: 1}},
		{name: "depth 2 refused", in: `[[]]`, lim: wire.Limits{MaxDepth: 1}, want: wire.ErrTooDeep},
		{name: "scalar has depth 0", in: `"x"`, lim: wire.Limits{MaxDepth: 1}},
		{name: "object in array counts", in: `[{"a":{}}]`, lim: wire.Limits{MaxDepth: 2}, want: wire.ErrTooDeep},
		{name: "default depth 32", in: strings.Repeat("[", 32) + strings.Repeat("]", 32)},
		{name: "default depth 33 refused", in: strings.Repeat("[", 33) + strings.Repeat("]", 33), want: wire.ErrTooDeep},
		{name: "underflow is finite", in: `1e-400`},
		{name: "largest float", in: `1.7976931348623157e308`},
		{name: "past largest float", in: `1.8e308`, want: wire.ErrNonFinite},
		{name: "surrogate pair accepted", in: `"\ud83d\ude00"`},
		{name: "escaped name duplicate", in: `{"\u00e9":1,"é":2}`, want: wire.ErrDuplicateName},
		{name: "same name in sibling objects", in: `[{"a":1},{"a":2}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := wire.Decode([]byte(tt.in), tt.lim)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Decode(%q) error = %v, want %v", tt.in, err, tt.want)
			}
		})
	}
}

// A deep or huge input fails before it is built: a 10 MiB nest is refused at
// the 33rd bracket, and an oversized body before parsing starts.
func TestDecodeFailsFast(t *testing.T) {
	deep := bytes.Repeat([]byte("["), 10<<20)
	_, err := wire.Decode(deep, wire.Limits{})
	var we *wire.Error
	if !errors.As(err, &we) || !errors.Is(err, wire.ErrTooDeep) || we.Offset != 32 {
		t.Fatalf("Decode(deep) = %v, want ErrTooDeep at offset 32", err)
	}
	huge := bytes.Repeat([]byte(" "), 1<<20)
	if _, err := wire.Decode(huge, wire.Limits{MaxBytes: 1024}); !errors.Is(err, wire.ErrTooLarge) {
		t.Fatalf("Decode(huge) = %v, want ErrTooLarge", err)
	}
}

func TestDecodeShapes(t *testing.T) {
	v, err := wire.Decode([]byte(`{"n":1.50,"s":"x","b":true,"z":null,"a":[1]}`), wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("object decoded as %T", v)
	}
	if n, ok := m["n"].(json.Number); !ok || n != "1.50" {
		t.Errorf("number decoded as %#v, want json.Number(\"1.50\")", m["n"])
	}
	if _, ok := m["a"].([]any); !ok {
		t.Errorf("array decoded as %T", m["a"])
	}
	if m["z"] != nil || m["b"] != true || m["s"] != "x" {
		t.Errorf("scalars decoded as %#v", m)
	}
}

func TestEncode(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	tests := []struct {
		name string
		in   any
		lim  wire.Limits
		want string
		err  error
	}{
		{name: "sorted names", in: map[string]any{"b": 1, "a": []string{"x"}}, want: `{"a":["x"],"b":1}`},
		{name: "no html escaping", in: "<a href='x'>&</a>", want: `"<a href='x'>&</a>"`},
		{name: "no ascii escaping", in: "é😀\u2028", want: "\"é😀\u2028\""},
		{name: "control characters", in: "\x00\x1f\x7f\n", want: `"\u0000\u001f` + "\x7f" + `\n"`},
		{name: "number verbatim", in: json.Number("1.000e+02"), want: `1.000e+02`},
		{name: "float plain", in: 0.1, want: `0.1`},
		{name: "float integral", in: 100.0, want: `100`},
		{name: "float exponent", in: 1e21, want: `1e+21`},
		{name: "float small exponent", in: 1e-7, want: `1e-7`},
		{name: "float32", in: float32(0.1), want: `0.1`},
		{name: "ints", in: []any{int8(-1), uint64(18446744073709551615)}, want: `[-1,18446744073709551615]`},
		{name: "string map", in: map[string]string{"z": "1", "a": "2"}, want: `{"a":"2","z":"1"}`},
		{name: "empty containers", in: []any{map[string]any{}, []any{}}, want: `[{},[]]`},
		{name: "nan", in: []any{nan()}, err: wire.ErrNonFinite},
		{name: "non-finite number literal", in: json.Number("1e400"), err: wire.ErrNonFinite},
		{name: "bad number literal", in: json.Number("01"), err: wire.ErrInvalidNumber},
		{name: "number literal with space", in: json.Number("1 "), err: wire.ErrInvalidNumber},
		{name: "invalid utf8 string", in: "\xff", err: wire.ErrInvalidUTF8},
		{name: "invalid utf8 name", in: map[string]any{"\xff": 1}, err: wire.ErrInvalidUTF8},
		{name: "unsupported type", in: struct{}{}, err: wire.ErrUnsupportedType},
		{name: "cyclic", in: cyclic, err: wire.ErrTooDeep},
		{name: "too deep", in: []any{[]any{}}, lim: wire.Limits{MaxDepth: 1}, err: wire.ErrTooDeep},
		{name: "exactly at byte limit", in: "abc", lim: wire.Limits{MaxBytes: 5}, want: `"abc"`},
		{name: "over byte limit", in: "abcd", lim: wire.Limits{MaxBytes: 5}, err: wire.ErrTooLarge},
		{name: "limit counts bytes not characters", in: "éé", lim: wire.Limits{MaxBytes: 5}, err: wire.ErrTooLarge},
		// The limit stops the encoder before it reaches the unsupported
		// value at the end: it does not encode everything first.
		{name: "stops at the limit", in: []any{strings.Repeat("x", 64), struct{}{}}, lim: wire.Limits{MaxBytes: 16}, err: wire.ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := wire.Encode(tt.in, tt.lim)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Encode error = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("Encode = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestAppendKeepsPrefixOnError(t *testing.T) {
	dst := []byte("prefix:")
	out, err := wire.Append(dst, struct{}{}, wire.Limits{})
	if err == nil || string(out) != "prefix:" {
		t.Fatalf("Append = %q, %v", out, err)
	}
	out, err = wire.Append(dst, "abc", wire.Limits{MaxBytes: 5})
	if err != nil || string(out) != `prefix:"abc"` {
		t.Fatalf("Append with limit = %q, %v (the limit counts appended bytes only)", out, err)
	}
}

func nan() float64 {
	zero := 0.0
	return zero / zero
}
