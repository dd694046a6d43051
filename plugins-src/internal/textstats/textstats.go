// Package textstats counts what a text is made of, with definitions that
// need no tables: bytes of UTF-8, code points, UTF-16 code units (what a
// JavaScript string's length says), letters, digits and white space by
// Unicode category, words as runs of non-space code points, and lines.
// Grapheme clusters (what a reader calls characters: an emoji with its
// modifiers, a letter with combining accents) are not counted: that needs
// the Unicode segmentation tables, and code points are what every limit
// in this platform counts.
package textstats

import (
	"unicode"
)

// Stats are the counts of one text.
type Stats struct {
	Bytes       int // UTF-8 bytes
	CodePoints  int // Unicode code points
	UTF16Units  int // UTF-16 code units: code points above U+FFFF count 2
	Letters     int // code points of category L
	Digits      int // code points of category Nd
	Spaces      int // white-space code points (unicode.IsSpace), line breaks included
	Words       int // maximal runs of code points that are not white space
	Lines       int // line breaks (LF, CRLF, CR), plus one for a last line without one; 0 for ""
	BlankLines  int // lines empty or of white space only
	LongestLine int // code points of the longest line, its break excluded
}

// Count returns the counts of text.
func Count(text string) Stats {
	s := Stats{Bytes: len(text)}
	inWord := false
	lineLen, lineBlank, lineOpen := 0, true, false
	endLine := func() {
		s.Lines++
		if lineBlank {
			s.BlankLines++
		}
		s.LongestLine = max(s.LongestLine, lineLen)
		lineLen, lineBlank, lineOpen = 0, true, false
	}
	for i, r := range text {
		s.CodePoints++
		s.UTF16Units++
		if r > 0xFFFF {
			s.UTF16Units++
		}
		switch {
		case unicode.IsLetter(r):
			s.Letters++
		case unicode.IsDigit(r):
			s.Digits++
		}
		space := unicode.IsSpace(r)
		if space {
			s.Spaces++
		} else if !inWord {
			s.Words++
		}
		inWord = !space
		switch r {
		case '\n':
			endLine()
			continue
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				continue // the LF ends the line
			}
			endLine()
			continue
		}
		lineOpen = true
		lineLen++
		if !space {
			lineBlank = false
		}
	}
	if lineOpen {
		endLine()
	}
	return s
}
