package minify

import (
	"errors"
	"io"
	"strings"

	"github.com/tdewolff/parse/v2"
	xmllex "github.com/tdewolff/parse/v2/xml"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// MaxDepth is the deepest element nesting checkTags accepts.
const MaxDepth = 1000

// checkTags checks that the tags of an XML or SVG text are well-formed: each
// start tag closed, each element closed by an end tag of the same name,
// comments, CDATA sections and processing instructions terminated. It does not
// check names, attributes, entities or that there is one root element.
func checkTags(lang Language, text string) error {
	in := parse.NewInputString(text)
	lex := xmllex.NewLexer(in)
	type open struct {
		name  string
		start int
	}
	var stack []open
	fail := func(offset int, reason string) error {
		return textpos.New(text, offset, subject(lang), reason)
	}
	for {
		tt, data := lex.Next()
		end := in.Offset()
		start := end - len(data)
		switch tt {
		case xmllex.ErrorToken:
			if err := lex.Err(); err != nil && !errors.Is(err, io.EOF) {
				return fail(end, "NUL character")
			}
			if len(stack) > 0 {
				return fail(stack[len(stack)-1].start, "element is not closed")
			}
			return nil
		case xmllex.CommentToken:
			if !strings.HasSuffix(string(data), "-->") || len(data) < 7 {
				return fail(start, "comment is not terminated")
			}
		case xmllex.CDATAToken:
			if !strings.HasSuffix(string(data), "]]>") || len(data) < 12 {
				return fail(start, "CDATA section is not terminated")
			}
		case xmllex.StartTagToken, xmllex.StartTagPIToken:
			name := string(lex.Text())
			if name == "" {
				return fail(start, "tag has no name")
			}
			var closeTok xmllex.TokenType
			for {
				closeTok, _ = lex.Next()
				if closeTok != xmllex.AttributeToken {
					break
				}
			}
			switch {
			case tt == xmllex.StartTagPIToken && closeTok == xmllex.StartTagClosePIToken:
			case tt == xmllex.StartTagToken && closeTok == xmllex.StartTagCloseVoidToken:
			case tt == xmllex.StartTagToken && closeTok == xmllex.StartTagCloseToken:
				if len(stack) >= MaxDepth {
					return fail(start, "elements nested deeper than 1000 levels")
				}
				stack = append(stack, open{name: name, start: start})
			default:
				return fail(start, "tag is not terminated")
			}
		case xmllex.EndTagToken:
			if !strings.HasSuffix(string(data), ">") {
				return fail(start, "tag is not terminated")
			}
			if len(stack) == 0 {
				return fail(start, "end tag without a start tag")
			}
			if top := stack[len(stack)-1]; string(lex.Text()) != top.name {
				return fail(start, "end tag does not match the open element")
			}
			stack = stack[:len(stack)-1]
		}
	}
}
