package linetext

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestSplitJoin(t *testing.T) {
	tests := []struct {
		text  string
		lines []string
		brk   string
		final bool
	}{
		{"", nil, "\n", false},
		{"a", []string{"a"}, "\n", false},
		{"a\n", []string{"a"}, "\n", true},
		{"a\r\nb", []string{"a", "b"}, "\r\n", false},
		{"a\rb\r", []string{"a", "b"}, "\r", true},
		{"\n\n", []string{"", ""}, "\n", true},
		{"a\r\nb\nc", []string{"a", "b", "c"}, "\r\n", false},
	}
	for _, tt := range tests {
		got := Split(tt.text)
		if !slices.Equal(got.Lines, tt.lines) || got.Break != tt.brk || got.Final != tt.final {
			t.Errorf("Split(%q) = %q %q %v", tt.text, got.Lines, got.Break, got.Final)
		}
		if c, _ := Convert(tt.text, map[string]string{"\n": "lf", "\r\n": "crlf", "\r": "cr"}[tt.brk]); got.Join() != c {
			t.Errorf("Join(Split(%q)) = %q, want %q", tt.text, got.Join(), c)
		}
	}
}

// The sort orders are those of GNU sort with LC_ALL=C: plain (sort),
// reverse (sort -r), case-folded (sort -f) and numeric (sort -n, with
// GNU's rule that lines without a number come first replaced by "last").
func TestSort(t *testing.T) {
	in := []string{"banana", "Apple", "cherry", "apple", "10 items", "9 items", "-2.5 below", "Banana"}
	tests := []struct {
		name string
		o    SortOptions
		want []string
	}{
		{"plain", SortOptions{}, []string{"-2.5 below", "10 items", "9 items", "Apple", "Banana", "apple", "banana", "cherry"}},
		{"descending", SortOptions{Descending: true}, []string{"cherry", "banana", "apple", "Banana", "Apple", "9 items", "10 items", "-2.5 below"}},
		{"ignore case, stable", SortOptions{IgnoreCase: true}, []string{"-2.5 below", "10 items", "9 items", "Apple", "apple", "banana", "Banana", "cherry"}},
		{"numeric", SortOptions{Numeric: true}, []string{"-2.5 below", "9 items", "10 items", "Apple", "Banana", "apple", "banana", "cherry"}},
		{"numeric descending", SortOptions{Numeric: true, Descending: true}, []string{"10 items", "9 items", "-2.5 below", "cherry", "banana", "apple", "Banana", "Apple"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := slices.Clone(in)
			Sort(got, tt.o)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestLeadingNumber(t *testing.T) {
	tests := []struct {
		s  string
		n  float64
		ok bool
	}{
		{"42", 42, true}, {"  -3.5x", -3.5, true}, {"+7", 7, true}, {"1.", 1, true}, {".5", 0.5, true},
		{"x1", 0, false}, {"-", 0, false}, {"", 0, false}, {".", 0, false},
	}
	for _, tt := range tests {
		if n, ok := leadingNumber(tt.s); n != tt.n || ok != tt.ok {
			t.Errorf("leadingNumber(%q) = %v %v", tt.s, n, ok)
		}
	}
}

func TestDedupeReverseShuffle(t *testing.T) {
	got, removed := Dedupe([]string{"a", "b", "A", "a", "c", "b"}, false)
	if !slices.Equal(got, []string{"a", "b", "A", "c"}) || removed != 2 {
		t.Errorf("Dedupe = %q %d", got, removed)
	}
	got, removed = Dedupe([]string{"a", "b", "A", "a"}, true)
	if !slices.Equal(got, []string{"a", "b"}) || removed != 2 {
		t.Errorf("Dedupe ignoring case = %q %d", got, removed)
	}
	l := []string{"1", "2", "3"}
	Reverse(l)
	if !slices.Equal(l, []string{"3", "2", "1"}) {
		t.Errorf("Reverse = %q", l)
	}
	a := []string{"a", "b", "c", "d", "e", "f", "g"}
	b := slices.Clone(a)
	Shuffle(a, 42)
	Shuffle(b, 42)
	if !slices.Equal(a, b) || slices.IsSorted(a) {
		t.Errorf("Shuffle(42) = %q and %q", a, b)
	}
	// Pinned: a change of generator or algorithm shows here.
	if want := []string{"d", "b", "g", "e", "a", "f", "c"}; !slices.Equal(a, want) {
		t.Errorf("Shuffle(42) = %q, pinned %q", a, want)
	}
}

func TestWhitespace(t *testing.T) {
	tests := []struct {
		name, where, scope, in, want string
	}{
		{"lines both", "both", "lines", "  a  \n\t b\t\r\n  \n", "a\nb\n\n"},
		{"lines start", "start", "lines", "  a  \n b ", "a  \nb "},
		{"lines end", "end", "lines", "  a  \n b ", "  a\n b"},
		{"text both", "both", "text", "\n\n  a \n b  \n\n", "a \n b"},
		{"text end", "end", "text", "  a\n\n", "  a"},
		{"unicode spaces", "both", "text", "\u00a0\u3000a\u2003", "a"},
		{"zero-width space is not white space", "both", "text", "\u200ba", "\u200ba"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Trim(tt.in, tt.where, tt.scope)
			if err != nil || got != tt.want {
				t.Errorf("Trim(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
	if _, err := Trim("a", "middle", "text"); !errors.Is(err, ErrOption) {
		t.Errorf("Trim(middle): %v", err)
	}
	if _, err := Trim("a", "both", "words"); !errors.Is(err, ErrOption) {
		t.Errorf("Trim(words): %v", err)
	}
	if got := Collapse("  a \t  b  \n\n c\u00a0\u00a0d "); got != "a b\n\nc d" {
		t.Errorf("Collapse = %q", got)
	}
	got, n := RemoveBlankLines("a\n\n \t\nb\r\n\n")
	if got != "a\nb\n" || n != 3 {
		t.Errorf("RemoveBlankLines = %q %d", got, n)
	}
	if got, n := RemoveBlankLines("\n\n"); got != "" || n != 2 {
		t.Errorf("RemoveBlankLines(blank only) = %q %d", got, n)
	}
}

func TestLineEndings(t *testing.T) {
	text := "a\r\nb\nc\rd\r\n"
	if b := Detect(text); b != (Breaks{LF: 1, CRLF: 2, CR: 1}) || b.Style() != "mixed" {
		t.Errorf("Detect = %+v %s", b, b.Style())
	}
	for _, tt := range []struct{ text, style string }{{"a\nb\n", "lf"}, {"a\r\n", "crlf"}, {"a\rb", "cr"}, {"ab", "none"}, {"", "none"}} {
		if got := Detect(tt.text).Style(); got != tt.style {
			t.Errorf("Detect(%q).Style() = %s, want %s", tt.text, got, tt.style)
		}
	}
	for to, want := range map[string]string{"lf": "a\nb\nc\nd\n", "crlf": "a\r\nb\r\nc\r\nd\r\n", "cr": "a\rb\rc\rd\r"} {
		if got, err := Convert(text, to); err != nil || got != want {
			t.Errorf("Convert(%s) = %q, %v", to, got, err)
		}
	}
	// "\n\r" is LF then a lone CR: two breaks, not one.
	if got, _ := Convert("a\n\rb", "crlf"); got != "a\r\n\r\nb" {
		t.Errorf("Convert(LF CR) = %q", got)
	}
	if _, err := Convert("a", "nel"); !errors.Is(err, ErrOption) {
		t.Errorf("Convert(nel): %v", err)
	}
}

func BenchmarkSort(b *testing.B) {
	lines := strings.Split(strings.Repeat("pear\nApple\n10 x\nbanana\n", 5000), "\n")
	for b.Loop() {
		Sort(slices.Clone(lines), SortOptions{IgnoreCase: true, Numeric: true})
	}
}
