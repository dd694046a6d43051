package linetext

import "strings"

// Breaks counts a text's line breaks by kind.
type Breaks struct {
	LF, CRLF, CR int
}

// Style names the breaks: "lf", "crlf" or "cr" when all are of one kind,
// "mixed" when there are several kinds, "none" when there are none.
func (b Breaks) Style() string {
	kinds, style := 0, "none"
	for _, k := range []struct {
		n    int
		name string
	}{{b.LF, "lf"}, {b.CRLF, "crlf"}, {b.CR, "cr"}} {
		if k.n > 0 {
			kinds++
			style = k.name
		}
	}
	if kinds > 1 {
		return "mixed"
	}
	return style
}

// Detect counts the line breaks of text.
func Detect(text string) Breaks {
	var b Breaks
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			b.LF++
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				b.CRLF++
				i++
			} else {
				b.CR++
			}
		}
	}
	return b
}

// breakOf is the line break of a target name.
var breakOf = map[string]string{"lf": "\n", "crlf": "\r\n", "cr": "\r"}

// Convert replaces every line break (LF, CRLF, lone CR) by the one named
// to ("lf", "crlf", "cr").
func Convert(text, to string) (string, error) {
	br, ok := breakOf[to]
	if !ok {
		return "", ErrOption
	}
	var b strings.Builder
	b.Grow(len(text))
	start := 0
	for i := 0; i < len(text); i++ {
		n := 0
		switch text[i] {
		case '\n':
			n = 1
		case '\r':
			n = 1
			if i+1 < len(text) && text[i+1] == '\n' {
				n = 2
			}
		default:
			continue
		}
		b.WriteString(text[start:i])
		b.WriteString(br)
		i += n - 1
		start = i + 1
	}
	b.WriteString(text[start:])
	return b.String(), nil
}
