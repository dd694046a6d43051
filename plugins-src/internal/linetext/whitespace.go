package linetext

import "strings"

// Trim removes horizontal white space — and, at the text's start and end,
// blank lines too — from where ("both", "start", "end") of the text
// (scope "text") or of each line (scope "lines").
func Trim(text, where, scope string) (string, error) {
	var trim func(string) string
	switch where {
	case "both":
		trim = func(s string) string { return strings.TrimFunc(s, isSpace) }
	case "start":
		trim = func(s string) string { return strings.TrimLeftFunc(s, isSpace) }
	case "end":
		trim = func(s string) string { return strings.TrimRightFunc(s, isSpace) }
	default:
		return "", ErrOption
	}
	switch scope {
	case "text":
		return trim(text), nil
	case "lines":
		t := Split(text)
		for i, l := range t.Lines {
			t.Lines[i] = trim(l)
		}
		return t.Join(), nil
	}
	return "", ErrOption
}

// isSpace is unicode.IsSpace, line breaks included: trimming the text
// removes blank lines at its ends.
func isSpace(r rune) bool { return r == '\n' || r == '\r' || horizontal(r) }

// Collapse replaces every run of horizontal white space inside a line by
// one space and trims every line; line breaks stay.
func Collapse(text string) string {
	t := Split(text)
	var b strings.Builder
	for i, l := range t.Lines {
		b.Reset()
		for j, w := range strings.FieldsFunc(l, horizontal) {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
		t.Lines[i] = b.String()
	}
	return t.Join()
}

// RemoveBlankLines drops the lines that are empty or white space only and
// reports how many.
func RemoveBlankLines(text string) (string, int) {
	t := Split(text)
	out := t.Lines[:0]
	for _, l := range t.Lines {
		if !blank(l) {
			out = append(out, l)
		}
	}
	removed := len(t.Lines) - len(out)
	t.Lines = out
	return t.Join(), removed
}
