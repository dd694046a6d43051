package querystring

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// The vectors follow the WHATWG URL standard's
// application/x-www-form-urlencoded parser (§5.1) and net/url's
// ParseQuery tests: '+' is a space, escapes are UTF-8, a bare name has no
// value, empty pairs are skipped.
func TestParse(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []Pair
	}{
		{"plain", "a=1&b=2", []Pair{{"a", "1", true}, {"b", "2", true}}},
		{"repeated names stay apart and in order", "b=2&a=1&b=3", []Pair{{"b", "2", true}, {"a", "1", true}, {"b", "3", true}}},
		{"plus and escapes", "q=caf%C3%A9+au+lait&x=%26%3D", []Pair{{"q", "café au lait", true}, {"x", "&=", true}}},
		{"leading question mark", "?a=1", []Pair{{"a", "1", true}}},
		{"whole URL with fragment", "https://example.com/p?a=1&b=#frag&c=3", []Pair{{"a", "1", true}, {"b", "", true}}},
		{"bare name and empty pairs", "a&&b=&=c", []Pair{{"a", "", false}, {"b", "", true}, {"", "c", true}}},
		{"value keeps later '='", "a=b=c", []Pair{{"a", "b=c", true}}},
		{"semicolon is a character", "a=1;b=2", []Pair{{"a", "1;b=2", true}}},
		{"empty", "", []Pair{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Parse(%q) = %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}

func TestParseFaults(t *testing.T) {
	tests := []struct{ text, want string }{
		{"a=1&b=%zz", "text is not a valid query string: '%' must be followed by two hex digits at line 1, column 7 (byte 6)"},
		{"?a=1&%FF=2", "text is not a valid query string: escaped bytes are not UTF-8 text at line 1, column 6 (byte 5)"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.text)
		var pe *textpos.Error
		if !errors.As(err, &pe) || err.Error() != tt.want {
			t.Errorf("Parse(%q): %v, want %q", tt.text, err, tt.want)
		}
	}
	if _, err := Parse(strings.Repeat("a&", MaxPairs+1)); !errors.Is(err, ErrTooMany) {
		t.Errorf("too many: %v", err)
	}
}

func TestBuild(t *testing.T) {
	got, err := Build([]Pair{{"q", "café au lait", true}, {"x", "&=+", true}, {"flag", "", false}, {"e", "", true}})
	if want := "q=caf%C3%A9+au+lait&x=%26%3D%2B&flag&e="; err != nil || got != want {
		t.Errorf("Build = %q, %v, want %q", got, err, want)
	}
	// Whatever Build writes, net/url reads back to the same values.
	pairs := []Pair{{"a b", "1+1=2", true}, {"ü", "😀/?#", true}}
	s, _ := Build(pairs)
	v, err := url.ParseQuery(s)
	if err != nil || v.Get("a b") != "1+1=2" || v.Get("ü") != "😀/?#" {
		t.Errorf("net/url reads %q as %v, %v", s, v, err)
	}
	back, _ := Parse(s)
	if !slices.Equal(back, pairs) {
		t.Errorf("round trip %v", back)
	}
}
