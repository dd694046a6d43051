// Package linetext holds the line-oriented text transforms: splitting a
// text into lines and joining them back, sorting, deduplicating, reversing
// and shuffling lines, trimming and collapsing white space, and converting
// line endings.
//
// A line ends at LF, CRLF or a lone CR (as textpos counts them). The line
// transforms join their result with the text's first line break (LF when it
// has none) and keep a final line break when the text had one, so a text of
// mixed endings comes back with one kind; line_endings converts them
// explicitly. White space is unicode.IsSpace; the three line breaks are
// not "horizontal" white space, every other space (tab, NBSP, NEL, U+2028,
// ideographic space) is.
package linetext

import (
	"errors"
	"strings"
	"unicode"
)

// Text is a text cut into lines.
type Text struct {
	Lines []string // without their breaks
	Break string   // the first line break of the text, "\n" when none
	Final bool     // whether the text ended with a line break
}

// Split cuts text into lines. "" has no lines; "a\n" has one, and Final.
func Split(text string) Text {
	t := Text{Break: ""}
	start := 0
	for i := 0; i < len(text); i++ {
		var br string
		switch text[i] {
		case '\n':
			br = "\n"
		case '\r':
			br = "\r"
			if i+1 < len(text) && text[i+1] == '\n' {
				br = "\r\n"
			}
		default:
			continue
		}
		if t.Break == "" {
			t.Break = br
		}
		t.Lines = append(t.Lines, text[start:i])
		i += len(br) - 1
		start = i + 1
	}
	if start < len(text) {
		t.Lines = append(t.Lines, text[start:])
	} else if len(t.Lines) > 0 {
		t.Final = true
	}
	if t.Break == "" {
		t.Break = "\n"
	}
	return t
}

// Join is the inverse of Split for a text of one kind of line break.
func (t Text) Join() string {
	s := strings.Join(t.Lines, t.Break)
	if t.Final && len(t.Lines) > 0 {
		s += t.Break
	}
	return s
}

// horizontal reports whether r is white space that is not a line break.
func horizontal(r rune) bool { return r != '\n' && r != '\r' && unicode.IsSpace(r) }

// blank reports whether line is empty or white space only.
func blank(line string) bool { return strings.TrimFunc(line, horizontal) == "" }

// ErrOption is returned for an unknown mode or line-break name.
var ErrOption = errors.New("linetext: unknown option")
