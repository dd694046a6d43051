package retext

import (
	"errors"
	"strings"
	"testing"
)

func must(t *testing.T, pattern string, f Flags) interface {
	MatchString(string) bool
} {
	t.Helper()
	re, err := Compile(pattern, f)
	if err != nil {
		t.Fatalf("Compile(%q): %v", pattern, err)
	}
	return re
}

// The flag and syntax cases follow the RE2 syntax reference
// (github.com/google/re2/wiki/Syntax) and Go's regexp/syntax error codes.
func TestCompile(t *testing.T) {
	if !must(t, "^B$", Flags{IgnoreCase: true, Multiline: true}).MatchString("a\nb\nc") {
		t.Error("(?im)^B$ does not match the second line")
	}
	if must(t, "^b$", Flags{}).MatchString("a\nb\nc") {
		t.Error("^b$ matches without multiline")
	}
	if !must(t, "a.c", Flags{DotAll: true}).MatchString("a\nc") || must(t, "a.c", Flags{}).MatchString("a\nc") {
		t.Error("dot_all wrong")
	}
	for pattern, reason := range map[string]string{
		"(a":                   "missing closing )",
		"a(?=b)":               "invalid or unsupported Perl syntax",
		`(a)\1`:                "invalid escape sequence",
		"a**":                  "invalid nested repetition operator",
		"x{1001}":              "invalid repeat count",
		"((a{100}){100}){100}": "invalid repeat count",
		"[z-a]":                "invalid character class range",
	} {
		_, err := Compile(pattern, Flags{})
		var pe *PatternError
		if !errors.As(err, &pe) || pe.Reason != reason {
			t.Errorf("Compile(%q): %v, want %q", pattern, err, reason)
		}
		if err != nil && strings.Contains(err.Error(), pattern) {
			t.Errorf("the error quotes the pattern: %v", err)
		}
	}
}

func TestTestReplace(t *testing.T) {
	re, _ := Compile(`(\w+)@(\w+)\.com`, Flags{})
	text := "ann@example.com, bob@test.com; nobody"
	if ok, n := Test(re, text); !ok || n != 2 {
		t.Errorf("Test = %v %d", ok, n)
	}
	if ok, n := Test(re, "none"); ok || n != 0 {
		t.Errorf("Test(none) = %v %d", ok, n)
	}
	// The expected results are what regexp's ReplaceAllString and
	// ReplaceAllLiteralString give.
	if got, n, err := Replace(re, text, "${2}:$1 $$", false, 1<<10); got != re.ReplaceAllString(text, "${2}:$1 $$") || got != "example:ann $, test:bob $; nobody" || n != 2 || err != nil {
		t.Errorf("Replace = %q %d %v", got, n, err)
	}
	if got, _, _ := Replace(re, text, "$1", true, 1<<10); got != "$1, $1; nobody" {
		t.Errorf("Replace literal = %q", got)
	}
	named, _ := Compile(`(?P<year>\d{4})-(?P<month>\d{2})`, Flags{})
	if got, _, _ := Replace(named, "2024-05", "${month}/${year}", false, 1<<10); got != "05/2024" {
		t.Errorf("Replace named = %q", got)
	}
	if got, n, _ := Replace(re, "none", "x", false, 1<<10); got != "none" || n != 0 {
		t.Errorf("Replace without a match = %q %d", got, n)
	}
	empty, _ := Compile(``, Flags{})
	re1, _ := Compile(`a`, Flags{})
	if _, _, err := Replace(re1, strings.Repeat("a", 1000), strings.Repeat("$0", 100), false, 1<<16); !errors.Is(err, ErrTooLarge) {
		t.Errorf("growing replacement: %v", err)
	}
	if got, _, err := Replace(empty, "ab", "-", false, 1<<10); got != "-a-b-" || err != nil {
		t.Errorf("empty pattern = %q %v", got, err)
	}
}

func TestExtract(t *testing.T) {
	re, _ := Compile(`(é+)(x)?`, Flags{})
	ms, more, err := Extract(re, "aéé béx 😀é", 10, 1<<10)
	if err != nil || more || len(ms) != 3 {
		t.Fatalf("Extract = %+v %v %v", ms, more, err)
	}
	want := []Match{
		{Text: "éé", Start: 1, End: 3, Groups: []string{"éé", ""}, Matched: []bool{true, false}},
		{Text: "éx", Start: 5, End: 7, Groups: []string{"é", "x"}, Matched: []bool{true, true}},
		{Text: "é", Start: 9, End: 10, Groups: []string{"é", ""}, Matched: []bool{true, false}},
	}
	for i := range want {
		g, w := ms[i], want[i]
		if g.Text != w.Text || g.Start != w.Start || g.End != w.End || strings.Join(g.Groups, "|") != strings.Join(w.Groups, "|") || g.Matched[1] != w.Matched[1] {
			t.Errorf("match %d = %+v, want %+v", i, g, w)
		}
	}
	if ms, more, _ := Extract(re, "é é é", 2, 1<<10); len(ms) != 2 || !more {
		t.Errorf("limit 2: %d matches, more %v", len(ms), more)
	}
	if _, _, err := Extract(re, strings.Repeat("é", 1000), 10, 100); !errors.Is(err, ErrTooLarge) {
		t.Errorf("too large: %v", err)
	}
	empty, _ := Compile(``, Flags{})
	if ms, more, _ := Extract(empty, "ab", 10, 1<<10); len(ms) != 3 || more || ms[2].Start != 2 {
		t.Errorf("empty pattern: %+v", ms)
	}
}
