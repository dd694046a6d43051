// Package textcase converts text between letter cases.
//
// Two families:
//
//   - Upper, Lower, Title and Sentence change the case of letters and leave
//     every other character (spaces, punctuation, digits, emoji, line breaks)
//     where it is.
//   - Camel, Pascal, Snake, Kebab and Constant split the text into words and
//     join them as an identifier. Words break at every character that is not
//     a letter, a digit or a combining mark; between a lower-case letter and
//     an upper-case one ("helloWorld"); before the last capital of a run of
//     capitals followed by a lower-case letter ("XMLHttp" → "XML", "Http");
//     and between letters and digits ("base64" → "base", "64"). Apostrophes
//     inside a word are dropped ("don't" → "dont").
//
// Case mapping is Unicode's simple mapping from the standard library, with
// two additions that matter in running text: "ß" upper-cases to "SS", and a
// capital sigma that ends a word lower-cases to "ς".
package textcase

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Case is a target case; its values are the case service's "to" values.
type Case string

// The cases.
const (
	Upper    Case = "upper"
	Lower    Case = "lower"
	Title    Case = "title"
	Sentence Case = "sentence"
	Camel    Case = "camel"
	Pascal   Case = "pascal"
	Snake    Case = "snake"
	Kebab    Case = "kebab"
	Constant Case = "constant"
)

// ErrCase is returned when Convert is asked for a case it does not know.
var ErrCase = errors.New("textcase: unknown case")

// Convert returns text in case to. It makes one pass over text (two for
// Sentence) and allocates little beyond the result.
func Convert(text string, to Case) (string, error) {
	switch to {
	case Upper:
		return upper(text), nil
	case Lower:
		return lower(text), nil
	case Title:
		return title(text), nil
	case Sentence:
		return sentence(text), nil
	case Camel:
		return join(text, "", capitalWords, true), nil
	case Pascal:
		return join(text, "", capitalWords, false), nil
	case Snake:
		return join(text, "_", lowerWords, false), nil
	case Kebab:
		return join(text, "-", lowerWords, false), nil
	case Constant:
		return join(text, "_", upperWords, false), nil
	}
	return "", ErrCase
}

func upper(s string) string {
	s = strings.ToUpper(s)
	if strings.ContainsRune(s, 'ß') {
		s = strings.ReplaceAll(s, "ß", "SS")
	}
	return s
}

// finalSigma reports whether the capital sigma at s[i] ends a word: a
// letter before it and no letter, digit or mark after it.
func finalSigma(s string, i int) bool {
	if i == 0 {
		return false
	}
	before, _ := utf8.DecodeLastRuneInString(s[:i])
	after, n := utf8.DecodeRuneInString(s[i+len("Σ"):])
	return unicode.IsLetter(before) && (n == 0 || !isWordRune(after))
}

// appendLower appends the lower case of r, the rune at s[i].
func appendLower(b *strings.Builder, s string, i int, r rune) {
	switch {
	case r < utf8.RuneSelf:
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		b.WriteByte(byte(r))
	case r == 'Σ' && finalSigma(s, i):
		b.WriteRune('ς')
	default:
		b.WriteRune(unicode.ToLower(r))
	}
}

// appendTitle appends the title case of r ("Ss" for ß).
func appendTitle(b *strings.Builder, r rune) {
	switch {
	case r < utf8.RuneSelf:
		if 'a' <= r && r <= 'z' {
			r -= 'a' - 'A'
		}
		b.WriteByte(byte(r))
	case r == 'ß':
		b.WriteString("Ss")
	default:
		b.WriteRune(unicode.ToTitle(r))
	}
}

// lower lower-cases s, giving a capital sigma that ends a word its final
// form.
func lower(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range s {
		appendLower(&b, s, i, r)
	}
	return b.String()
}

// asciiClass classifies the ASCII runes so that the per-rune tests of the
// word splitter need no call (each call is costly in a WASM guest).
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range utf8.RuneSelf {
		switch {
		case 'A' <= c && c <= 'Z':
			t[c] = classUpper
		case 'a' <= c && c <= 'z':
			t[c] = classLower
		case '0' <= c && c <= '9':
			t[c] = classDigit
		}
	}
	return t
}()

const (
	classUpper = 1 << iota
	classLower
	classDigit
)

// runeClass is r's class: upper, lower, digit, or 0 for anything else, a
// mark included.
func runeClass(r rune) uint8 {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	return nonASCIIClass(r)
}

func nonASCIIClass(r rune) uint8 {
	switch {
	case unicode.IsUpper(r):
		return classUpper
	case unicode.IsLower(r):
		return classLower
	case unicode.IsDigit(r):
		return classDigit
	}
	return 0
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r] != 0
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

func isApostrophe(r rune) bool { return r == '\'' || r == '’' }

// nextIsWordRune reports whether the rune at s[i] is a word rune.
func nextIsWordRune(s string, i int) bool {
	r, n := utf8.DecodeRuneInString(s[i:])
	return n > 0 && isWordRune(r)
}

// title capitalizes each word of text — a run of letters, digits and marks,
// with apostrophes inside it ("don't" is one word) — and leaves the rest.
func title(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	inWord := false
	for i, r := range text {
		switch {
		case isWordRune(r):
			if inWord {
				appendLower(&b, text, i, r)
			} else {
				appendTitle(&b, r)
			}
			inWord = true
		case inWord && isApostrophe(r) && nextIsWordRune(text, i+utf8.RuneLen(r)):
			b.WriteRune(r)
		default:
			b.WriteRune(r)
			inWord = false
		}
	}
	return b.String()
}

// isSentenceEnd reports whether r ends a sentence.
func isSentenceEnd(r rune) bool {
	switch r {
	case '.', '!', '?', '…', '。', '！', '？', '‼', '⁇', '⁈', '⁉':
		return true
	}
	return false
}

// sentence lower-cases text, then upper-cases the first letter of the text
// and the first letter after each sentence end followed by white space or
// the end of the text.
func sentence(text string) string {
	low := lower(text)
	var b strings.Builder
	b.Grow(len(low))
	start := true
	for i, r := range low {
		switch {
		case start && unicode.IsLetter(r):
			appendTitle(&b, r)
			start = false
			continue
		case start && unicode.IsDigit(r):
			start = false
		case isSentenceEnd(r):
			next, n := utf8.DecodeRuneInString(low[i+utf8.RuneLen(r):])
			if n == 0 || unicode.IsSpace(next) {
				start = true
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

// eachWord calls word with the bytes [start, end) of each word of text, in
// order: the words the identifier cases join. A word may hold apostrophes,
// which are dropped on output.
func eachWord(text string, word func(start, end int)) {
	start := -1 // the current word's start, -1 outside a word
	// The classes of the current rune and the word's previous two, combining
	// marks skipped; prevAt is the previous rune's offset, n the word's runes.
	var cls, prevCls, prev2Cls uint8
	prevAt, n := 0, 0
	for i, r := range text {
		switch {
		case start >= 0 && isApostrophe(r) && nextIsWordRune(text, i+utf8.RuneLen(r)):
			continue // inside a word: dropped on output
		case r < utf8.RuneSelf && asciiClass[r] == 0, r >= utf8.RuneSelf && !isWordRune(r):
			// (The ASCII test is written out: no call for the common case.)
			if start >= 0 {
				word(start, i)
				start = -1
			}
			continue
		case start < 0:
			start, prevAt, n = i, i, 1
			prevCls, prev2Cls = runeClass(r), 0
			continue
		case r >= utf8.RuneSelf && unicode.IsMark(r):
			continue // stays with its letter
		}
		cls = runeClass(r)
		switch {
		case (cls == classDigit) != (prevCls == classDigit), cls == classUpper && prevCls == classLower:
			word(start, i)
			start, n = i, 0
		case n > 1 && cls == classLower && prevCls == classUpper && prev2Cls == classUpper:
			// "XMLHttp": the capital before this lower-case letter starts
			// a new word.
			word(start, prevAt)
			start, n = prevAt, 1
		}
		prevAt = i
		prev2Cls, prevCls = prevCls, cls
		n++
	}
	if start >= 0 {
		word(start, len(text))
	}
}

// wordCase is how join writes each word.
type wordCase uint8

const (
	lowerWords   wordCase = iota // every rune lower
	upperWords                   // every rune upper
	capitalWords                 // first rune title, the rest lower
)

// join writes the words of text in case c separated by sep; with
// lowerFirst the first word is all lower case (camel case). ASCII letters
// and digits are mapped in place, without a call: in a WASM guest a Go call
// costs far more than the arithmetic it saves.
func join(text, sep string, c wordCase, lowerFirst bool) string {
	b := make([]byte, 0, len(text)+len(text)/8)
	k := 0
	eachWord(text, func(start, end int) {
		if k > 0 {
			b = append(b, sep...)
		}
		wc := c
		if k == 0 && lowerFirst {
			wc = lowerWords
		}
		k++
		word := text[start:end]
		first := true
		for i, r := range word {
			titled := wc == capitalWords && first // appendCased titles it
			switch {
			case r < utf8.RuneSelf && asciiClass[r] != 0 && !titled:
				ch := byte(r)
				switch {
				case wc == upperWords && asciiClass[ch] == classLower:
					ch -= 'a' - 'A'
				case wc != upperWords && asciiClass[ch] == classUpper:
					ch += 'a' - 'A'
				}
				b = append(b, ch)
			case isApostrophe(r):
				continue
			default:
				b = appendCased(b, word, i, r, wc, first)
			}
			first = false
		}
	})
	return string(b)
}

// appendCased appends r, the rune at word[i], in case wc: Unicode's simple
// mappings, with "SS" and "Ss" for ß and the final form of a word-ending Σ.
func appendCased(b []byte, word string, i int, r rune, wc wordCase, first bool) []byte {
	switch {
	case wc == upperWords && r == 'ß':
		return append(b, "SS"...)
	case wc == upperWords:
		return utf8.AppendRune(b, unicode.ToUpper(r))
	case wc == capitalWords && first && r == 'ß':
		return append(b, "Ss"...)
	case wc == capitalWords && first:
		return utf8.AppendRune(b, unicode.ToTitle(r))
	case r == 'Σ' && finalSigma(word, i):
		return utf8.AppendRune(b, 'ς')
	}
	return utf8.AppendRune(b, unicode.ToLower(r))
}
