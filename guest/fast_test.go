//go:build !wasip1 && !guestgen

package guest

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// The fast path must agree with the strict path: whenever it computes an
// item, the input it decoded, the result and the error are the strict
// path's; and on the inputs the platform sends (valid parameters, in the
// host's canonical form or not) it must not give up.

type diffInner struct {
	Name string   `json:"name"`
	Tags []string `json:"tags,omitempty"`
	Pair [2]int16 `json:"pair,omitempty"`
}

type diffEmbedded struct {
	Flag bool `json:"flag,omitempty"`
}

type diffMode string

type diffIn struct {
	Operation string `json:"operation"`
	diffEmbedded
	Text  string      `json:"text"`
	Mode  *diffMode   `json:"mode,omitempty"`
	U8    uint8       `json:"u8,omitempty"`
	U64   *uint64     `json:"u64,omitempty"`
	I32   int32       `json:"i32,omitempty" ops:"b"`
	I     int         `json:"i,omitempty"`
	F32   float32     `json:"f32,omitempty"`
	F64   *float64    `json:"f64,omitempty"`
	Data  []byte      `json:"data,omitempty"`
	Items []diffInner `json:"items,omitempty"`
	Inner *diffInner  `json:"inner,omitempty" ops:"a"`
	Grid  [][]int     `json:"grid,omitempty"`
	Bits  [3]bool     `json:"bits,omitzero"`
	On    *bool       `json:"on,omitempty"`
}

type diffOut struct {
	Text  string      `json:"text"`
	Items []diffInner `json:"items"`
	Data  []byte      `json:"data,omitempty"`
	F     float32     `json:"f"`
	Inner *diffInner  `json:"inner,omitempty" ops:"a"`
	Grid  [][]int     `json:"grid,omitempty" ops:"b"`
}

// diffPackage's compute records the input it was given.
func diffPackage(got *[]diffIn) Package {
	compute := func(ctx *Context, in diffIn) (diffOut, error) {
		*got = append(*got, in)
		out := diffOut{Text: in.Text, Items: in.Items, Data: in.Data, F: in.F32}
		if in.Operation == "a" {
			out.Inner = in.Inner
		} else {
			out.Grid = in.Grid
		}
		return out, nil
	}
	return Package{ContractVersion: "1.0.0", ImplementationVersion: "1.0.0", Services: []Declaration{
		testService("diff", ops("a", "b"), compute),
		testService("tool", ops("echo", "repeat", "behave"), toolCompute),
	}}
}

// diffCorpus holds valid items (which the fast path must compute) and
// invalid ones.
var diffCorpus = []struct {
	input string
	fast  bool // must be computed on the fast path
}{
	{`{"operation":"a","parameters":{"operation":"a","text":"abc"},"tool_code":"diff"}`, true},
	{`{"tool_code":"diff","operation":"a","parameters":{"operation":"a","text":""}}`, true},
	{` { "parameters" : { "text" : "x\"y\\z\/\b\f\n\r\t\u00e9\u0000\u001f\uD83D\uDE00" , "operation" : "a" } , "tool_code" : "diff" , "operation" : "a" } ` + "\n", true},
	{`{"operation":"a","parameters":{"operation":"a","text":"é😀中\u2028","mode":"m","u8":255,"u64":18446744073709551615,"i":-9223372036854775808,"f32":3.4e38,"f64":-0,"data":"AAEC/w==","flag":true,"on":false},"tool_code":"diff"}`, true},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","items":[{"name":"n","tags":["a","b"],"pair":[1,-2]},{"name":"m"}],"inner":{"name":"i","tags":[]},"grid":[[1,2],[],[3]],"bits":[true,false,true]},"tool_code":"diff"}`, true},
	{`{"operation":"b","parameters":{"operation":"b","text":"t","i32":-2147483648,"items":[],"grid":[],"data":""},"tool_code":"diff"}`, true},
	{`{"operation":"b","parameters":{"operation":"b","text":"t","f64":1.5e-7,"f32":1E2,"u8":0},"tool_code":"diff"}`, true},
	{`{"operation":"echo","parameters":{"operation":"echo","text":"a\"b\u00e9\n<>","item":{"name":"n","tags":["x","y"]},"data":"AAEC","count":-7,"ratio":0.5},"tool_code":"tool"}`, true},
	{`{"operation":"repeat","parameters":{"times":3,"text":"ab","operation":"repeat"},"tool_code":"tool"}`, true},
	{`{"operation":"a","parameters":{"operation":"a","text":"` + strings.Repeat("long text, ", 200) + `"},"tool_code":"diff"}`, true},

	// Valid, but for the strict path.
	{`{"operation":"a","parameters":{"operation":"a","text":"t","i":2.0},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","i":1e3},"tool_code":"diff"}`, false},
	{"{\"operation\":\"a\",\"parameters\":{\"operation\":\"a\",\"text\":\"bad \xff utf-8\"},\"tool_code\":\"diff\"}", false},
	{`{"operation":"a","parameters":{"operation":"a","text":"lone \ud800 surrogate \udc00\u0041 \ud800\ud800"},"tool_code":"diff"}`, true},
	{"{\"operation\":\"a\",\"parameters\":{\"operation\":\"a\",\"text\":\"raw \xed\xa0\x80 surrogate\"},\"tool_code\":\"diff\"}", false},
	{"{\"operation\":\"a\",\"parameters\":{\"operation\":\"a\",\"text\":\"cut \xe2\x82\"},\"tool_code\":\"diff\"}", false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","u8":-0},"tool_code":"diff"}`, false},

	// Refused.
	{`{"operation":"a","parameters":{"operation":"a","text":"t","i32":1},"tool_code":"diff"}`, false},
	{`{"operation":"b","parameters":{"operation":"b","text":"t","inner":{"name":"x"}},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"b","text":"t"},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"text":"t"},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a"},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","text":"u"},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","te\u0078t":"u"},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","items":[{"name":"n","name":"m"}]},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","u8":256},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","u8":-1},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","i":9223372036854775808},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","f32":3.5e38},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","f64":1e400},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","i":01},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","i":-},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","i":1.},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","data":"AAE"},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","bits":[true]},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","bits":[true,true,true,true]},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","mode":null},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":null},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","on":"true"},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","on":tru},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","grid":[[1],[2,]]},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t",},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t"}},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t"} ,"tool_code":"diff"} x`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t"},"tool_code":"diff"}{}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"tab	in text"},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"bad \x escape"},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"bad \u12 escape"},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","unknown":1},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t"},"tool_code":"diff","operation":"a"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t"},"tool_code":"diff","extra":1}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t"}}`, false},
	{`{"operation":"c","parameters":{"operation":"c","text":"t"},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t"},"tool_code":"nope"}`, false},
	{`{"operation":"a","parameters":[],"tool_code":"diff"}`, false},
	{`{"operation":1,"parameters":{},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","items":[{"name":"n"}` + strings.Repeat(`,[`, 40) + `]},"tool_code":"diff"}`, false},
	{`{"operation":"a","parameters":{"operation":"a","text":"t","grid":` + strings.Repeat(`[`, 200) + strings.Repeat(`]`, 200) + `},"tool_code":"diff"}`, false},
	{`[]`, false},
	{``, false},
}

// compareFastStrict runs input both ways and fails t if the fast path
// computed it differently from the strict path. It reports whether the
// fast path computed it.
func compareFastStrict(t *testing.T, pkg Package, got *[]diffIn, input []byte) bool {
	t.Helper()
	*got = nil
	fastOut, fastErr, done := invokeFast(pkg, input, rand.IntN(2) == 0)
	fastIn := *got
	*got = nil
	strictOut, strictErr := invokeStrict(pkg, input)
	if !done {
		if fastIn != nil {
			t.Errorf("%q: the fast path computed and then gave up", input)
		}
		return false
	}
	if !bytes.Equal(fastOut, strictOut) || !reflect.DeepEqual(fastErr, strictErr) {
		t.Errorf("%q:\nfast   %s %v\nstrict %s %v", input, fastOut, fastErr, strictOut, strictErr)
	}
	if !reflect.DeepEqual(fastIn, *got) {
		t.Errorf("%q: decoded input\nfast   %#v\nstrict %#v", input, fastIn, *got)
	}
	return true
}

func TestFastPathAgrees(t *testing.T) {
	var got []diffIn
	pkg := diffPackage(&got)
	usePackage(t, pkg)
	for _, tc := range diffCorpus {
		if done := compareFastStrict(t, pkg, &got, []byte(tc.input)); done != tc.fast {
			t.Errorf("%q: computed on the fast path: %v, want %v", tc.input, done, tc.fast)
		}
	}
}

// TestFastPathMutations compares the two paths on many corruptions of the
// corpus: bytes replaced, dropped, duplicated.
func TestFastPathMutations(t *testing.T) {
	var got []diffIn
	pkg := diffPackage(&got)
	usePackage(t, pkg)
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "{}[],:\" \\/u0123456789eE.-+abtnrfl\x00\x1f\x7f\xc3\xa9\xff"
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for range n {
		input := []byte(diffCorpus[rng.IntN(len(diffCorpus))].input)
		for range 1 + rng.IntN(3) {
			if len(input) == 0 {
				break
			}
			i := rng.IntN(len(input))
			switch rng.IntN(3) {
			case 0:
				input[i] = alphabet[rng.IntN(len(alphabet))]
			case 1:
				input = append(input[:i:i], input[i+1:]...)
			case 2:
				input = append(input[:i+1:i+1], input[i:]...)
			}
		}
		compareFastStrict(t, pkg, &got, input)
		if t.Failed() {
			return
		}
	}
}

func FuzzFastPath(f *testing.F) {
	for _, tc := range diffCorpus {
		f.Add([]byte(tc.input))
	}
	var got []diffIn
	pkg := diffPackage(&got)
	f.Fuzz(func(t *testing.T, input []byte) {
		usePackage(t, pkg)
		compareFastStrict(t, pkg, &got, input)
	})
}

// TestStringCodec checks the string scanner and appendString on every
// length around the 8-byte step, with the special bytes in every position.
func TestStringCodec(t *testing.T) {
	specials := []string{`"`, `\`, "\n", "\x00", "\x1f", "é", "😀", "\xff", "\xed\xa0\x80", "\u2028", "\x7f"}
	for n := range 20 {
		for pos := 0; pos <= n; pos++ {
			for _, sp := range specials {
				s := strings.Repeat("a", pos) + sp + strings.Repeat("b", n-pos)
				want := appendStringReference(nil, s)
				if got := appendString(nil, s); string(got) != string(want) {
					t.Fatalf("appendString(%q) = %s, want %s", s, got, want)
				}
				// Read back what was written, as encoding/json does.
				var want2 string
				if err := json.Unmarshal(want, &want2); err != nil {
					t.Fatal(err)
				}
				r := reader{data: want}
				if back, ok := r.str(); !ok || r.pos != len(want) || back != want2 {
					t.Fatalf("reading %s: %q %v at %d", want, back, ok, r.pos)
				}
			}
		}
	}
}

// appendStringReference is the byte-by-byte appendString the SDK had.
func appendStringReference(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// TestScanners checks the word-at-a-time scanners against byte-by-byte
// references, on random bytes biased towards the ones they stop at, at
// every start offset.
func TestScanners(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "Z", " ", "~", "\x7f", `"`, `\`, "\x00", "\x1f", "\n", "é", "😀", "中", "\xff", "\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe0\x80\x80", "\xc0\xaf", "\xef\xbf\xbd"}
	plainRef := func(d []byte, i int) int {
		for ; i < len(d); i++ {
			if c := d[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
				break
			}
		}
		return i
	}
	textRef := func(d []byte, i int) int {
		for i < len(d) {
			c := d[i]
			if c < 0x20 || c == '"' || c == '\\' {
				return i
			}
			if c < 0x80 {
				i++
				continue
			}
			r, n := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && n == 1 {
				return i
			}
			i += n
		}
		return i
	}
	quoteRef := func(d []byte, i int) int {
		for i < len(d) {
			switch d[i] {
			case '"':
				return i
			case '\\':
				i += 2
			default:
				i++
			}
		}
		return -1
	}
	for range 3000 {
		var b strings.Builder
		plain := rng.IntN(4) == 0 // long plain runs
		for n := rng.IntN(120); b.Len() < n; {
			if plain || rng.IntN(3) > 0 {
				b.WriteString(pieces[rng.IntN(4)])
			} else {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
		}
		d := []byte(b.String())
		for i := 0; i <= len(d); i++ {
			if got, want := plainEnd(d, i), plainRef(d, i); got != want {
				t.Fatalf("plainEnd(%q, %d) = %d, want %d", d, i, got, want)
			}
			if got, want := textEnd(d, i), textRef(d, i); got != want {
				t.Fatalf("textEnd(%q, %d) = %d, want %d", d, i, got, want)
			}
			if got, want := quoteEnd(d, i), quoteRef(d, i); got != want {
				t.Fatalf("quoteEnd(%q, %d) = %d, want %d", d, i, got, want)
			}
		}
		if got, want := appendString(nil, string(d)), appendStringReference(nil, string(d)); string(got) != string(want) {
			t.Fatalf("appendString(%q) = %s, want %s", d, got, want)
		}
	}
}

// TestRuneSize checks runeSize against utf8.DecodeRune on every first and
// second byte, with third and fourth bytes at the edges of the
// continuation range.
func TestRuneSize(t *testing.T) {
	edges := []byte{0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff}
	for c0 := 0x80; c0 < 0x100; c0++ {
		for c1 := range 0x100 {
			for _, c2 := range edges {
				for _, c3 := range edges {
					b := []byte{byte(c0), byte(c1), c2, c3}
					want := 0
					if r, n := utf8.DecodeRune(b); r != utf8.RuneError || n > 1 {
						want = n
					}
					if got := runeSize(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24); got != want {
						t.Fatalf("runeSize(% x) = %d, want %d", b, got, want)
					}
				}
			}
		}
	}
}
