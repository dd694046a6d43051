// Package textpos locates bytes in submitted text and describes faults at a
// position without quoting the text: the bundled transforms report where and
// why a text is unusable, never what it says.
package textpos

import (
	"strconv"
	"unicode/utf8"
)

// Position locates one byte of a text. Offset is the 0-based byte offset into
// the text's UTF-8 encoding; Line and Column are 1-based, and Column counts
// code points from the start of the line. A line ends at LF, CRLF or a lone CR.
type Position struct {
	Offset int
	Line   int
	Column int
}

// At returns the position of byte offset in text. An offset past the end is
// the end of the text; a negative one is its start. At walks the text once up
// to offset, so callers compute it only when they report a fault.
func At(text string, offset int) Position {
	offset = min(max(offset, 0), len(text))
	line, start := 1, 0
	for i := 0; i < offset; i++ {
		switch text[i] {
		case '\n':
			line, start = line+1, i+1
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				continue
			}
			line, start = line+1, i+1
		}
	}
	return Position{Offset: offset, Line: line, Column: utf8.RuneCountInString(text[start:offset]) + 1}
}

// String renders the position as "line 1, column 8 (byte 7)".
func (p Position) String() string {
	return "line " + strconv.Itoa(p.Line) + ", column " + strconv.Itoa(p.Column) +
		" (byte " + strconv.Itoa(p.Offset) + ")"
}

// Error is a fault in submitted text: the text cannot be used for the
// transform asked of it. Subject says what the text failed to be ("text is not
// valid JSON"), Reason says why in a few words of the package's own, and
// Position says where. None of the three quotes the text.
type Error struct {
	Subject  string
	Reason   string
	Position Position
}

// Error renders "<subject>: <reason> at line L, column C (byte O)".
func (e *Error) Error() string {
	return e.Subject + ": " + e.Reason + " at " + e.Position.String()
}

// New returns an [Error] for the byte at offset in text.
func New(text string, offset int, subject, reason string) *Error {
	return &Error{Subject: subject, Reason: reason, Position: At(text, offset)}
}
