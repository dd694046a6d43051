// Package entities encodes text as HTML character references and decodes
// them, with the standard library's html package: decoding knows the whole
// HTML5 named-reference table, and the html package fills its maps on first
// use, not at start.
package entities

import (
	"errors"
	"html"
	"strconv"
	"strings"
)

// ErrMode is returned for an unknown encode mode.
var ErrMode = errors.New("entities: unknown mode")

// Encode escapes text for HTML text and attribute values. Mode "minimal"
// escapes the five characters & < > " ' (as html.EscapeString does:
// &amp; &lt; &gt; &#34; &#39;); mode "non_ascii" also writes every code
// point above U+007E as a hexadecimal reference (&#xE9;), for a page whose
// encoding is not UTF-8.
func Encode(text, mode string) (string, error) {
	switch mode {
	case "minimal":
		return html.EscapeString(text), nil
	case "non_ascii":
		s := html.EscapeString(text)
		var b strings.Builder
		b.Grow(len(s))
		for _, r := range s {
			if r < 0x7f {
				b.WriteRune(r)
				continue
			}
			b.WriteString("&#x")
			b.WriteString(strings.ToUpper(strconv.FormatInt(int64(r), 16)))
			b.WriteByte(';')
		}
		return b.String(), nil
	}
	return "", ErrMode
}

// Decode replaces every character reference — named (&eacute;, and the
// legacy ones without a semicolon, &amp), decimal (&#233;) and hexadecimal
// (&#xE9;) — by its characters, as an HTML5 parser does in text: a
// reference to a code point that cannot appear (0, a surrogate, past
// U+10FFFF) becomes U+FFFD, and an unknown name stays as written.
func Decode(text string) string { return html.UnescapeString(text) }
