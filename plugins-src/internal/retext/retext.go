// Package retext tests, replaces and extracts with regular expressions in
// Go's RE2 syntax (regexp): matching takes time linear in the text, with
// no backtracking, so no pattern can make it run away. Lookaround and
// backreferences, which need backtracking, are not available, and a
// pattern that uses them is refused with the reason.
package retext

import (
	"errors"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// Flags are the pattern's flags, as (?i), (?m) and (?s) would set them.
type Flags struct {
	IgnoreCase bool // i: letters match either case
	Multiline  bool // m: ^ and $ match at line starts and ends, not only the text's
	DotAll     bool // s: . matches \n too
}

// PatternError is a pattern RE2 cannot compile: Reason is the syntax
// error's code ("missing closing )", "invalid or unsupported Perl
// syntax"), without the pattern.
type PatternError struct{ Reason string }

func (e *PatternError) Error() string { return "pattern is not a valid RE2 expression: " + e.Reason }

// ErrTooLarge is a replacement or an extraction past the result bound.
var ErrTooLarge = errors.New("retext: result too large")

// Compile compiles pattern with the flags.
func Compile(pattern string, f Flags) (*regexp.Regexp, error) {
	prefix := ""
	if f.IgnoreCase {
		prefix += "i"
	}
	if f.Multiline {
		prefix += "m"
	}
	if f.DotAll {
		prefix += "s"
	}
	if prefix != "" {
		pattern = "(?" + prefix + ")" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, &PatternError{Reason: string(se.Code)}
		}
		return nil, &PatternError{Reason: "unsupported"}
	}
	return re, nil
}

// Test reports whether re matches text and how many non-overlapping
// matches there are.
func Test(re *regexp.Regexp, text string) (bool, int) {
	n := len(re.FindAllStringIndex(text, -1))
	return n > 0, n
}

// Replace replaces every match: with literal true, by replacement as
// written; otherwise replacement's $1, ${1}, ${name} and $$ expand as
// regexp.Expand does (a $ name is the longest run of letters, digits and
// '_': write ${1}x, not $1x). It returns the text and the matches
// replaced, or ErrTooLarge as soon as the result passes maxBytes: a
// replacement of 4 KiB for each of 100,000 matches would otherwise build
// hundreds of megabytes before any bound could look at it.
func Replace(re *regexp.Regexp, text, replacement string, literal bool, maxBytes int) (string, int, error) {
	matches := re.FindAllStringSubmatchIndex(text, -1)
	out := make([]byte, 0, min(len(text), maxBytes))
	last := 0
	for _, m := range matches {
		out = append(out, text[last:m[0]]...)
		if literal {
			out = append(out, replacement...)
		} else {
			out = re.ExpandString(out, replacement, text, m)
		}
		last = m[1]
		if len(out) > maxBytes {
			return "", 0, ErrTooLarge
		}
	}
	out = append(out, text[last:]...)
	if len(out) > maxBytes {
		return "", 0, ErrTooLarge
	}
	return string(out), len(matches), nil
}

// Match is one match: its text, its position in code points from the
// start of the text (End exclusive), and its capture groups (1 to n; a
// group that took no part is "" and false in Matched).
type Match struct {
	Text       string
	Start, End int
	Groups     []string
	Matched    []bool
}

// Extract returns the first limit matches, whether more exist, and fails
// with ErrTooLarge when the matches and groups hold more than maxBytes.
func Extract(re *regexp.Regexp, text string, limit, maxBytes int) ([]Match, bool, error) {
	idx := re.FindAllStringSubmatchIndex(text, limit+1)
	more := len(idx) > limit
	if more {
		idx = idx[:limit]
	}
	matches := make([]Match, 0, len(idx))
	size, pos, cps := 0, 0, 0 // bytes held; a byte offset and its code-point count
	at := func(off int) int {
		cps += utf8.RuneCountInString(text[pos:off])
		pos = off
		return cps
	}
	for _, m := range idx {
		mt := Match{Text: text[m[0]:m[1]], Start: at(m[0]), End: at(m[1])}
		size += m[1] - m[0]
		for g := 2; g < len(m); g += 2 {
			if m[g] < 0 {
				mt.Groups = append(mt.Groups, "")
				mt.Matched = append(mt.Matched, false)
				continue
			}
			mt.Groups = append(mt.Groups, text[m[g]:m[g+1]])
			mt.Matched = append(mt.Matched, true)
			size += m[g+1] - m[g]
		}
		if size > maxBytes {
			return nil, false, ErrTooLarge
		}
		matches = append(matches, mt)
	}
	return matches, more, nil
}
