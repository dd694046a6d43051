package htmlfmt

// The element tables are switches, not maps, so that a fresh instance does no
// work to build them.

// isInline reports whether elements named name are phrasing content, laid out
// inside a line of text: whitespace around them is significant.
func isInline(name string) bool {
	switch name {
	case "a", "abbr", "acronym", "audio", "b", "bdi", "bdo", "big", "br", "button", "canvas", "cite",
		"code", "data", "datalist", "del", "dfn", "em", "embed", "font", "i", "iframe", "img", "input",
		"ins", "kbd", "label", "map", "mark", "math", "meter", "noscript", "object", "output", "picture",
		"progress", "q", "rp", "rt", "ruby", "s", "samp", "select", "slot", "small", "span", "strike",
		"strong", "sub", "sup", "svg", "textarea", "time", "tt", "u", "var", "video", "wbr":
		return true
	}
	return false
}

// isVoid reports whether elements named name have no contents and no end tag.
func isVoid(name string) bool {
	switch name {
	case "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta",
		"param", "source", "track", "wbr":
		return true
	}
	return false
}

// isRawText reports whether the lexer returns the contents of elements named
// name as one text token. It must match github.com/tdewolff/parse/v2/html.
func isRawText(name string) bool {
	switch name {
	case "iframe", "plaintext", "script", "style", "textarea", "title", "xmp":
		return true
	}
	return false
}

// Lists of the elements a start tag implicitly closes. Slices of constants
// are laid out by the linker: no init-time work.
var (
	closedByLi       = []string{"li"}
	closedByDtDd     = []string{"dt", "dd"}
	closedByCell     = []string{"td", "th"}
	closedByRow      = []string{"td", "th", "tr"}
	closedBySection  = []string{"td", "th", "tr", "thead", "tbody", "tfoot"}
	closedByOption   = []string{"option"}
	closedByOptgroup = []string{"option", "optgroup"}
	closedByRuby     = []string{"rt", "rp"}
	closedByBody     = []string{"head"}
)

// impliedBy returns the elements a start tag named name closes, in order,
// when each is the current element.
func impliedBy(name string) []string {
	switch name {
	case "li":
		return closedByLi
	case "dt", "dd":
		return closedByDtDd
	case "td", "th":
		return closedByCell
	case "tr":
		return closedByRow
	case "thead", "tbody", "tfoot":
		return closedBySection
	case "option":
		return closedByOption
	case "optgroup":
		return closedByOptgroup
	case "rt", "rp":
		return closedByRuby
	case "body":
		return closedByBody
	}
	return nil
}

// closesP reports whether a start tag named name closes an open p element.
func closesP(name string) bool {
	switch name {
	case "address", "article", "aside", "blockquote", "details", "dialog", "div", "dl", "fieldset",
		"figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup",
		"hr", "listing", "main", "menu", "nav", "ol", "p", "pre", "section", "table", "ul":
		return true
	}
	return false
}
