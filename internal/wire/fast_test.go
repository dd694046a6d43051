package wire

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// fastCorpus is the texts both decoding paths are compared on: the
// canonical vectors, the fuzz corpus and hand-made edge cases.
func fastCorpus(t testing.TB) [][]byte {
	var in [][]byte
	for _, glob := range []string{"../../testdata/canonical/valid/*.json", "../../testdata/canonical/invalid/*.json"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			in = append(in, b)
		}
	}
	for _, s := range []string{
		`{"input":{"operation":"digest","text":"abc","algorithm":"sha256"}}`,
		` { "a" : [ 1 , -0 , 0.5 , -1.25e-3 , 1E+2 , 1e400 , 123456789012345678901234567890 ] , "b" : null } `,
		`{"a":1,"a":2}`, `{"a":{"b":1},"a":1}`, `{"\u0061":1,"a":2}`, `{"a\"b":1}`, `"\u00e9"`, `"é"`, `"\ud800"`,
		`[]`, `{}`, `[[]]`, `[{}]`, `null`, `true`, `false`, `0`, `-0`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `--1`,
		`[1,]`, `{"a":1,}`, `{,}`, `[,1]`, `{"a"}`, `{"a":}`, `{"a" 1}`, `{1:2}`, `[1 2]`, `"a` + "\t" + `b"`,
		`"unterminated`, `[`, `{`, `{"a":1`, `nul`, `truex`, `[true false]`, `1 2`, ``, ` `, "\n[1]\n", `[1]x`,
		strings.Repeat("[", 32) + strings.Repeat("]", 32), strings.Repeat("[", 33) + strings.Repeat("]", 33),
		`{"a":` + strings.Repeat("9", 400) + `}`, `-` + strings.Repeat("9", 309), `1e308`, `1.8e308`, `-1e309`, `1e-400`,
		`{"a":"` + "\u2028" + `"}`, `{"":""}`, `[null,{"x":[true]}]`,
	} {
		in = append(in, []byte(s))
	}
	return in
}

// checkFast compares the two paths on in: where the fast path answers,
// the tokenizer's must accept the text with the same value.
func checkFast(t testing.TB, in []byte, lim Limits) (fast bool) {
	v, ok := fastDecode(in, lim.depth())
	if !ok {
		return false
	}
	w, err := tokenDecode(in, lim)
	if err != nil {
		t.Fatalf("the fast path accepts %q, the tokenizer refuses it: %v", in, err)
	}
	if !reflect.DeepEqual(v, w) {
		t.Fatalf("the paths disagree on %q:\n%#v\n%#v", in, v, w)
	}
	return true
}

// TestFastDecode: on every text of the corpus, valid UTF-8 without a BOM
// (Decode checks those before either path), the fast path's values are
// the tokenizer's, and it answers the plain texts (else it saves nothing).
func TestFastDecode(t *testing.T) {
	fast := 0
	for _, in := range fastCorpus(t) {
		if !validText(in) {
			continue
		}
		if checkFast(t, in, Limits{}) {
			fast++
		}
		checkFast(t, in, Limits{MaxDepth: 2})
	}
	for _, plain := range []string{`{"input":{"operation":"digest","text":"abc","algorithm":"sha256"}}`, `[1,-0.5,1e3,"x",null,true,{}]`} {
		if _, ok := fastDecode([]byte(plain), DefaultMaxDepth); !ok {
			t.Errorf("the fast path gives up on the plain %s", plain)
		}
	}
	if fast < 20 {
		t.Errorf("the fast path answered %d texts of the corpus", fast)
	}
}

// FuzzFastDecode holds the fast path to the tokenizer's on any input.
func FuzzFastDecode(f *testing.F) {
	for _, in := range fastCorpus(f) {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if _, err := Decode(in, Limits{}); err != nil {
			// Decode refused it: the fast path must not have accepted it
			// (a BOM or invalid UTF-8 is refused before either path).
			if v, ok := fastDecode(in, DefaultMaxDepth); ok && validText(in) {
				t.Fatalf("Decode refuses %q (%v) but the fast path gives %#v", in, err, v)
			}
			return
		}
		if validText(in) {
			checkFast(t, in, Limits{})
		}
	})
}

// validText is what Decode checks before either path.
func validText(in []byte) bool {
	return !strings.HasPrefix(string(in), "\xEF\xBB\xBF") && utf8.Valid(in)
}
