package slugify

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/gosimple/unidecode"
)

var update = flag.Bool("update", false, "regenerate unidecode.bin from github.com/gosimple/unidecode")

// tableBytes builds the table unidecode.bin holds (see table).
func tableBytes(t *testing.T) []byte {
	index := make([]byte, 0, indexBytes)
	var pool []byte
	at := map[string]int{}
	for r := rune(0); r <= 0xFFFF; r++ {
		s := ""
		if r < 0xD800 || r > 0xDFFF { // surrogates are not runes of a string
			s = unidecode.Unidecode(string(r))
		}
		off, ok := at[s]
		if !ok {
			off = len(pool)
			at[s] = off
			pool = append(pool, s...)
		}
		if len(s) > 15 || off >= 1<<20 {
			t.Fatalf("U+%04X: %q does not fit the index", r, s)
		}
		v := off<<4 | len(s)
		index = append(index, byte(v>>16), byte(v>>8), byte(v))
	}
	return append(index, pool...)
}

// TestTable checks unidecode.bin against the library's transliteration;
// with -update it regenerates the file.
func TestTable(t *testing.T) {
	want := tableBytes(t)
	if *update {
		if err := os.WriteFile("unidecode.bin", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal([]byte(table), want) {
		t.Error("unidecode.bin is stale: run go test ./plugins-src/internal/slugify -run TestTable -update")
	}
}
