// Package minify minifies HTML, CSS, JavaScript, SVG and XML text with
// github.com/tdewolff/minify/v2, and turns its faults into *textpos.Error
// values that never quote the text.
//
// The settings are conservative: HTML keeps its document tags (html, head,
// body), end tags, attribute quotes and special comments (conditional
// comments, "<!--!"); other comments and insignificant whitespace go. Code
// embedded in a document (script and style contents, style and on*
// attributes, inline SVG) is minified when it parses and copied unchanged
// when it does not, so a document never fails because of one script. XML and
// SVG must be well-formed as far as tags go: every start tag closed by a
// matching end tag (the minifier itself would silently repair or drop them).
package minify

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	tdminify "github.com/tdewolff/minify/v2"
	"github.com/tdewolff/minify/v2/css"
	"github.com/tdewolff/minify/v2/html"
	"github.com/tdewolff/minify/v2/js"
	"github.com/tdewolff/minify/v2/json"
	"github.com/tdewolff/minify/v2/svg"
	"github.com/tdewolff/minify/v2/xml"
	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/buffer"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// Language is a language Minify knows.
type Language string

// The languages, named as the minify service's operations.
const (
	HTML Language = "html"
	CSS  Language = "css"
	JS   Language = "js"
	SVG  Language = "svg"
	XML  Language = "xml"
)

// ErrLanguage is returned when Minify is asked for a language it does not know.
var ErrLanguage = errors.New("minify: unknown language")

// subjects names what a text failed to be, per language.
func subject(lang Language) string {
	switch lang {
	case HTML:
		return "text is not valid HTML"
	case CSS:
		return "text is not valid CSS"
	case JS:
		return "text is not valid JavaScript"
	case SVG:
		return "text is not well-formed SVG"
	}
	return "text is not well-formed XML"
}

// Mediatypes of embedded code the HTML and SVG minifiers hand over.
var (
	jsTypes   = []string{"application/javascript", "text/javascript", "application/ecmascript", "text/ecmascript", "application/x-javascript", "module"}
	jsonTypes = []string{"application/json", "application/ld+json", "importmap"}
)

// Minify minifies text written in lang. Faults are *textpos.Error values.
func Minify(lang Language, text string) (string, error) {
	m := tdminify.New()
	var top tdminify.Minifier
	switch lang {
	case HTML:
		top = &html.Minifier{KeepDocumentTags: true, KeepEndTags: true, KeepQuotes: true, KeepSpecialComments: true}
		for _, t := range jsTypes {
			m.Add(t, lenient{&js.Minifier{}})
		}
		for _, t := range jsonTypes {
			m.Add(t, lenient{&json.Minifier{}})
		}
		m.Add("text/css", lenient{&css.Minifier{}})
		m.Add("image/svg+xml", lenient{&svg.Minifier{}})
		m.Add("text/xml", lenient{&xml.Minifier{}})
	case CSS:
		top = &css.Minifier{}
	case JS:
		top = &js.Minifier{}
	case SVG:
		if err := checkTags(lang, text); err != nil {
			return "", err
		}
		top = &svg.Minifier{}
		m.Add("text/css", lenient{&css.Minifier{}})
	case XML:
		if err := checkTags(lang, text); err != nil {
			return "", err
		}
		top = &xml.Minifier{}
	default:
		return "", ErrLanguage
	}
	out := buffer.NewWriter(make([]byte, 0, len(text)))
	if err := top.Minify(m, out, buffer.NewReader([]byte(text)), nil); err != nil {
		var pe *parse.Error
		if errors.As(err, &pe) {
			return "", &textpos.Error{
				Subject:  subject(lang),
				Reason:   reason(pe.Message),
				Position: position(text, pe.Line, pe.Column),
			}
		}
		return "", err
	}
	return string(out.Bytes()), nil
}

// lenient minifies embedded code, and copies it unchanged when it does not
// parse.
type lenient struct{ m tdminify.Minifier }

func (l lenient) Minify(m *tdminify.M, w io.Writer, r io.Reader, params map[string]string) error {
	src, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := l.m.Minify(m, &out, buffer.NewReader(src), params); err != nil {
		_, err = w.Write(src)
		return err
	}
	_, err = w.Write(out.Bytes())
	return err
}

// position returns the position of line and column (a count of code points)
// as the parse package counts them: lines end at LF, CRLF, CR, U+2028 and
// U+2029.
func position(text string, line, column int) textpos.Position {
	i, l := 0, 1
	for i < len(text) && l < line {
		switch {
		case text[i] == '\n':
			i++
			l++
		case text[i] == '\r':
			i++
			if i < len(text) && text[i] == '\n' {
				i++
			}
			l++
		case strings.HasPrefix(text[i:], "\u2028"), strings.HasPrefix(text[i:], "\u2029"):
			i += 3
			l++
		default:
			i++
		}
	}
	for c := 1; c < column && i < len(text); c++ {
		_, n := utf8.DecodeRuneInString(text[i:])
		i += n
	}
	return textpos.Position{Offset: i, Line: line, Column: column}
}

// reason keeps the parts of a parser message that are the parser's own
// words, dropping any token of the text it quotes: "unexpected foo in
// expression" becomes "unexpected token in expression".
func reason(msg string) string {
	context := ""
	if i := strings.LastIndex(msg, " in "); i >= 0 && knownContext(msg[i+4:]) {
		msg, context = msg[:i], msg[i:]
	}
	switch {
	case strings.HasPrefix(msg, "expected ") && strings.Contains(msg, " instead of "):
		msg = msg[:strings.Index(msg, " instead of ")]
	case strings.HasPrefix(msg, "identifier ") && strings.HasSuffix(msg, " has already been declared"):
		msg = "identifier declared twice"
	case msg == "unexpected EOF":
		msg = "unexpected end of input"
	case fixedMessage(msg):
	case strings.HasPrefix(msg, "unexpected "):
		msg = "unexpected token"
	default:
		msg = "syntax error"
	}
	return msg + context
}

// fixedMessage reports whether msg is one of the parsers' messages that
// carries no text of the input.
func fixedMessage(msg string) bool {
	switch msg {
	case "unexpected NULL character", "unexpected EOF or newline", "unexpected identifier after number",
		"unexpected EOF in comment", "legacy octal numbers are not supported", "invalid number",
		"unterminated string literal", "unterminated template literal", "expected / or /=",
		"too many nested statements", "too many nested expressions", "unexpected let [ in single-statement context",
		"unexpected newline in throw statement", "invalid parameters in arrow function", "invalid parameters":
		return true
	}
	return false
}

// knownContext reports whether s is one of the JavaScript parser's own
// "in …" contexts.
func knownContext(s string) bool {
	switch s {
	case "arguments", "array binding pattern", "arrow function", "binding", "class declaration",
		"conditional expression", "const declaration", "const statement", "do-while statement",
		"dot expression", "export statement", "expression", "for statement", "function declaration",
		"if statement", "import expression", "import statement", "import.meta expression",
		"index expression", "let declaration", "new.target expression", "object binding pattern",
		"object literal", "optional chaining expression", "regular expression", "relational expression",
		"statement", "super expression", "switch statement", "template literal", "try statement",
		"try-catch statement", "var statement", "while statement", "with statement":
		return true
	}
	return false
}
