// Package htmlfmt re-indents HTML text.
//
// Beautify changes whitespace only where HTML rendering ignores it: around
// block-level elements, and runs of whitespace inside text, which become one
// space. Inline content (text, inline elements, comments) stays on one line
// with its spaces, so "<b>a</b><i>b</i>" never gains a space between the two
// words. The contents of pre, listing, textarea, script, style, title, xmp,
// iframe and plaintext elements, and whole svg and math elements, are copied
// exactly as written. Tags, attributes, comments and character references are
// copied as written too (only the whitespace between attributes becomes one
// space); no end tag is added or removed, so HTML that relies on implied end
// tags ("<li>one<li>two") keeps them implied.
//
// Tokens come from github.com/tdewolff/parse/v2/html; the tree is built with
// a small subset of the HTML parsing rules (void elements, the common implied
// end tags, end tags closing open descendants, stray end tags kept in place).
package htmlfmt

import (
	"errors"
	"io"
	"strings"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/html"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// MaxIndent is the widest indentation accepted, in spaces per level.
const MaxIndent = 8

// MaxDepth is the deepest element nesting accepted.
const MaxDepth = 1000

const subject = "text cannot be laid out as HTML"

var (
	// ErrTooLarge is returned when the output would exceed the maxBytes bound.
	ErrTooLarge = errors.New("htmlfmt: output exceeds the size limit")
	// ErrIndent is returned when the indent is outside 0..MaxIndent.
	ErrIndent = errors.New("htmlfmt: indent must be between 0 and 8")
)

// Beautify re-indents text with indent spaces per level (0 to MaxIndent).
// maxBytes bounds the output, 0 meaning no bound. The result has no trailing
// newline. Faults in the text (a NUL character inside svg or math, nesting
// deeper than MaxDepth) are *textpos.Error values.
func Beautify(text string, indent, maxBytes int) (string, error) {
	if indent < 0 || indent > MaxIndent {
		return "", ErrIndent
	}
	t, err := build(text)
	if err != nil {
		return "", err
	}
	if maxBytes <= 0 {
		maxBytes = int(^uint(0) >> 1)
	}
	w := writer{tree: t, indent: indent, limit: maxBytes, out: make([]byte, 0, len(text)+len(text)/4+16)}
	w.layout(t.nodes[0].first, 0)
	w.brk()
	if w.over {
		return "", ErrTooLarge
	}
	return string(w.out), nil
}

// kind is the layout kind of a node.
type kind uint8

const (
	textNode     kind = iota // text, whitespace collapsed on output
	elementNode              // an element laid out with its children
	verbatimNode             // copied as written: comments, doctypes, pre, raw-text, svg, stray end tags
)

// span is the bytes [start, end) of the text; start < 0 means none.
type span struct{ start, end int32 }

var none = span{-1, -1}

// node is one node of the tree. It holds no pointers — text by offset,
// names and rewritten start tags by index, children as a linked list of
// indices — so a text of many small elements costs neither an allocation
// per node nor garbage-collector work (both dear in a fresh WASM instance).
type node struct {
	kind   kind
	inline bool   // laid out inside a line of inline content
	name   uint16 // elementNode and end tags: index in tree.names
	src    span   // textNode, verbatimNode: the source; elementNode: the start tag as written
	tag    int32  // elementNode: index in tree.tags of the start tag as output, -1 when src is
	end    span   // elementNode: the end tag as written, none when implied or missing
	first  int32  // first child, -1 when none
	last   int32  // last child
	next   int32  // next sibling, -1 when none
}

// tree is a parsed text: nodes[0] is the root.
type tree struct {
	text  string
	nodes []node
	names []string // lower-case tag names; names[0] is ""
	flags []flag   // what each name is, computed once per name
	tags  []string // start tags whose attribute spacing changed
}

// flag says what elements of a name are. The element tables are string
// switches, which cost a fresh WASM instance dearly per call: they run once
// per distinct name, and every element reads its name's flags.
type flag uint8

const (
	inlineFlag  flag = 1 << iota // isInline
	voidFlag                     // isVoid
	rawFlag                      // isRawText
	preFlag                      // pre or listing: contents copied as written
	closesPFlag                  // closesP
	impliesFlag                  // impliedBy is not empty
	pFlag                        // the p element
)

func flagsOf(name string) flag {
	var f flag
	for _, c := range []struct {
		on bool
		f  flag
	}{
		{isInline(name), inlineFlag}, {isVoid(name), voidFlag}, {isRawText(name), rawFlag},
		{name == "pre" || name == "listing", preFlag}, {closesP(name), closesPFlag},
		{len(impliedBy(name)) > 0, impliesFlag}, {name == "p", pFlag},
	} {
		if c.on {
			f |= c.f
		}
	}
	return f
}

// is reports whether elements named by id have flag f.
func (t *tree) is(id uint16, f flag) bool { return t.flags[id]&f != 0 }

// builder turns the lexer's tokens into a tree.
type builder struct {
	*tree
	in      *parse.Input
	lex     *html.Lexer
	nameIDs map[string]uint16
	stack   []int32 // open elements, the root first
	scratch []byte  // a start tag being rewritten
}

// token is one lexer token and the bytes [start, end) it covers in the text.
type token struct {
	tt         html.TokenType
	name       uint16
	start, end int
}

func (b *builder) next() token {
	tt, data := b.lex.Next()
	end := b.in.Offset()
	if tt == html.ErrorToken {
		end = min(end, len(b.text))
		return token{tt: tt, start: end, end: end}
	}
	t := token{tt: tt, start: end - len(data), end: end}
	if tt == html.StartTagToken || tt == html.EndTagToken {
		t.name = b.intern(b.lex.Text())
	}
	return t
}

// intern returns the index of the lower-case tag name in names.
func (b *builder) intern(name []byte) uint16 {
	if id, ok := b.nameIDs[string(name)]; ok {
		return id
	}
	if len(b.names) == 1<<16 {
		return 0 // more distinct names than any real text has: treat as unnamed
	}
	id := uint16(len(b.names))
	b.names = append(b.names, string(name))
	b.flags = append(b.flags, flagsOf(string(name)))
	b.nameIDs[string(name)] = id
	return id
}

func sp(start, end int) span { return span{int32(start), int32(end)} }

func build(text string) (*tree, error) {
	// The lexer lower-cases tag and attribute names in place, so it reads a
	// copy and the output is taken from text by offset.
	buf := make([]byte, len(text), len(text)+1)
	copy(buf, text)
	b := &builder{
		tree:    &tree{text: text, names: []string{""}, flags: []flag{0}, nodes: make([]node, 0, 16+len(text)/8)},
		in:      parse.NewInputBytes(buf),
		nameIDs: map[string]uint16{},
	}
	b.lex = html.NewLexer(b.in)
	b.nodes = append(b.nodes, node{kind: elementNode, tag: -1, end: none, first: -1, last: -1, next: -1})
	b.stack = []int32{0}
	for {
		t := b.next()
		src := sp(t.start, t.end)
		switch t.tt {
		case html.ErrorToken:
			if err := b.lex.Err(); err != nil && !errors.Is(err, io.EOF) {
				return nil, textpos.New(text, t.start, subject, "NUL character inside an svg or math element")
			}
			b.settle(0)
			return b.tree, nil
		case html.TextToken:
			k := textNode
			if strings.HasPrefix(text[t.start:t.end], "<![CDATA[") {
				k = verbatimNode
			}
			b.add(k, true, src)
		case html.CommentToken:
			b.add(verbatimNode, true, src)
		case html.DoctypeToken:
			b.add(verbatimNode, false, src)
		case html.SVGToken, html.MathToken, html.XMLToken:
			b.add(verbatimNode, true, src)
		case html.EndTagToken:
			b.endTag(t)
		case html.StartTagToken:
			if err := b.startTag(t); err != nil {
				return nil, err
			}
		default:
			// Attribute and close tokens are read by startTag; anything else
			// (templates are off) is kept as written.
			b.add(verbatimNode, true, src)
		}
	}
}

func (b *builder) top() int32 { return b.stack[len(b.stack)-1] }

// add appends a node to the current element and returns its index.
func (b *builder) add(k kind, inline bool, src span) int32 {
	i := int32(len(b.nodes))
	b.nodes = append(b.nodes, node{kind: k, inline: inline, src: src, tag: -1, end: none, first: -1, last: -1, next: -1})
	p := &b.nodes[b.top()]
	if p.first < 0 {
		p.first = i
	} else {
		b.nodes[p.last].next = i
	}
	p.last = i
	return i
}

// startTag reads the attributes and the close of the start tag t, then opens,
// adds or captures its element.
func (b *builder) startTag(t token) error {
	tag := append(b.scratch[:0], b.text[t.start:t.end]...)
	var close token
	for {
		a := b.next()
		if a.tt == html.AttributeToken {
			tag = append(tag, ' ')
			tag = append(tag, trimSpace(b.text[a.start:a.end])...)
			continue
		}
		close = a
		break
	}
	if close.tt != html.StartTagCloseToken && close.tt != html.StartTagVoidToken {
		// The text ended inside the tag: keep the rest as written.
		b.add(verbatimNode, true, sp(t.start, len(b.text)))
		return nil
	}
	if close.tt == html.StartTagVoidToken && close.start > 0 && isSpace(b.text[close.start-1]) {
		tag = append(tag, ' ')
	}
	tag = append(tag, b.text[close.start:close.end]...)
	b.scratch = tag
	rewritten := int32(-1)
	if string(tag) != b.text[t.start:close.end] { // the attribute spacing changed
		rewritten = int32(len(b.tags))
		b.tags = append(b.tags, string(tag))
	}

	b.implyEnd(t.name)
	switch {
	case b.is(t.name, rawFlag):
		// The lexer returns the contents as one text token, then the end tag.
		var end int
		for {
			n := b.next()
			if n.tt == html.ErrorToken {
				end = len(b.text)
				break
			}
			end = n.end
			if n.tt == html.EndTagToken {
				break
			}
		}
		b.add(verbatimNode, b.is(t.name, inlineFlag), sp(t.start, end))
		return nil
	case b.is(t.name, preFlag):
		b.add(verbatimNode, false, sp(t.start, b.skipElement(t.name)))
		return nil
	}
	void := b.is(t.name, voidFlag)
	if !void && len(b.stack) > MaxDepth {
		return textpos.New(b.text, t.start, subject, "elements nested deeper than 1000 levels")
	}
	i := b.add(elementNode, false, sp(t.start, close.end))
	b.nodes[i].name, b.nodes[i].tag = t.name, rewritten
	if !void {
		b.stack = append(b.stack, i)
	}
	return nil
}

// skipElement reads tokens up to the end tag that closes an element named
// name already opened, and returns the offset after it (or the end of text).
func (b *builder) skipElement(name uint16) int {
	depth := 1
	for {
		n := b.next()
		switch n.tt {
		case html.ErrorToken:
			return len(b.text)
		case html.StartTagToken:
			if n.name == name {
				depth++
			}
		case html.EndTagToken:
			if n.name == name {
				if depth--; depth == 0 {
					return n.end
				}
			}
		}
	}
}

// implyEnd pops the elements a start tag named by id implicitly closes when
// they are the current element.
func (b *builder) implyEnd(id uint16) {
	if b.is(id, impliesFlag) {
		for _, closed := range impliedBy(b.names[id]) {
			if len(b.stack) > 1 && b.names[b.nodes[b.top()].name] == closed {
				b.stack = b.stack[:len(b.stack)-1]
			}
		}
	}
	if b.is(id, closesPFlag) && len(b.stack) > 1 && b.is(b.nodes[b.top()].name, pFlag) {
		b.stack = b.stack[:len(b.stack)-1]
	}
}

// endTag closes the nearest open element named t.name, and every element
// opened inside it; an end tag with no open element is kept in place.
func (b *builder) endTag(t token) {
	for i := len(b.stack) - 1; i > 0; i-- {
		if n := &b.nodes[b.stack[i]]; n.name == t.name {
			n.end = sp(t.start, t.end)
			b.stack = b.stack[:i]
			return
		}
	}
	b.add(verbatimNode, b.is(t.name, inlineFlag), sp(t.start, t.end))
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

func trimSpace(s string) string {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

// settle decides, bottom-up, which elements lay out inside a line: inline
// elements whose contents are all inline. Text, comments and inline verbatim
// nodes were decided when they were added. Its recursion is as deep as the
// elements nest, at most MaxDepth.
func (t *tree) settle(i int32) {
	n := &t.nodes[i]
	for c := n.first; c >= 0; c = t.nodes[c].next {
		if t.nodes[c].kind == elementNode {
			t.settle(c)
		}
	}
	if n.kind == elementNode && n.name != 0 {
		n.inline = t.is(n.name, inlineFlag) && t.allInline(n.first)
	}
}

// allInline reports whether the node first and its siblings after it are
// all inline.
func (t *tree) allInline(first int32) bool {
	for c := first; c >= 0; c = t.nodes[c].next {
		if !t.nodes[c].inline {
			return false
		}
	}
	return true
}

// startTag returns the start tag of element n as output.
func (t *tree) startTag(n *node) string {
	if n.tag >= 0 {
		return t.tags[n.tag]
	}
	return t.text[n.src.start:n.src.end]
}

// endTag returns the end tag of element n as written, or "".
func (t *tree) endTag(n *node) string {
	if n.end.start < 0 {
		return ""
	}
	return t.text[n.end.start:n.end.end]
}

func (t *tree) source(n *node) string { return t.text[n.src.start:n.src.end] }

// writer lays the tree out as lines. It keeps the line being filled with
// inline content in cur and only breaks it where a block-level node begins or
// ends, so that no whitespace is added where rendering would show it.
type writer struct {
	*tree
	indent   int
	limit    int
	out      []byte
	over     bool   // out passed limit; the layout stops writing
	cur      []byte // the line being filled
	curDepth int    // its indentation depth
	trimNext bool   // drop leading whitespace from the next text (after a block start tag)
}

// line writes s as a whole line at depth.
func (w *writer) line(depth int, s string) {
	w.lineBytes(depth, s, nil)
}

// lineBytes writes s, then b, as a whole line at depth.
func (w *writer) lineBytes(depth int, s string, b []byte) {
	if w.over {
		return
	}
	if len(w.out) > 0 {
		w.out = append(w.out, '\n')
	}
	for n := depth * w.indent; n > 0; {
		k := min(n, len(spaces))
		w.out = append(w.out, spaces[:k]...)
		n -= k
	}
	w.out = append(w.out, s...)
	w.out = append(w.out, b...)
	w.over = len(w.out) > w.limit
}

const spaces = "                                                                "

// brk ends the current line, its trailing whitespace dropped, unless it is
// empty.
func (w *writer) brk() {
	w.trimRight()
	if len(w.cur) > 0 {
		w.lineBytes(w.curDepth, "", w.cur)
	}
	w.cur = w.cur[:0]
	w.trimNext = false
}

func (w *writer) trimRight() {
	for len(w.cur) > 0 && isSpace(w.cur[len(w.cur)-1]) {
		w.cur = w.cur[:len(w.cur)-1]
	}
}

// put appends s to the current line, starting it at depth if it is empty.
func (w *writer) put(depth int, s string) {
	if len(w.cur) == 0 {
		w.curDepth = depth
	}
	w.cur = append(w.cur, s...)
	w.trimNext = false
}

// text appends text with each whitespace run as one space; at the start of a
// line or after a block start tag its leading whitespace is dropped.
func (w *writer) text(depth int, s string) {
	if len(w.cur) == 0 || w.trimNext {
		s = trimLeft(s)
		if s == "" {
			return
		}
	}
	if len(w.cur) == 0 {
		w.curDepth = depth
	}
	w.trimNext = false
	// Copy each run of non-space bytes at once, and one space for each run
	// of white space.
	for len(s) > 0 {
		i := 0
		for i < len(s) && !isSpace(s[i]) {
			i++
		}
		w.cur = append(w.cur, s[:i]...)
		if i == len(s) {
			break
		}
		w.cur = append(w.cur, ' ')
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		s = s[i:]
	}
	if len(w.cur) > w.limit {
		w.over = true
	}
}

func trimLeft(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	return s
}

// layout lays out the node first and its siblings at depth.
func (w *writer) layout(first int32, depth int) {
	for c := first; c >= 0 && !w.over; c = w.nodes[c].next {
		n := &w.nodes[c]
		switch {
		case n.inline:
			w.inline(n, depth)
		case n.kind == verbatimNode:
			w.brk()
			w.line(depth, w.source(n))
		case w.is(n.name, inlineFlag):
			// An inline element with block-level contents: lines break
			// inside it, next to its block-level children, never outside.
			w.put(depth, w.startTag(n))
			w.layout(n.first, depth+1)
			w.put(depth, w.endTag(n))
		default:
			w.block(n, depth)
		}
	}
}

// block lays out a block-level element: on one line when its contents are
// all inline, else its start tag, its children one level deeper and its end
// tag on lines of their own.
func (w *writer) block(n *node, depth int) {
	w.brk()
	w.put(depth, w.startTag(n))
	if w.allInline(n.first) {
		w.trimNext = true
		for c := n.first; c >= 0; c = w.nodes[c].next {
			w.inline(&w.nodes[c], depth+1)
		}
		w.trimRight()
		w.put(depth, w.endTag(n))
		w.brk()
		return
	}
	w.brk()
	w.layout(n.first, depth+1)
	w.brk()
	if end := w.endTag(n); end != "" {
		w.put(depth, end)
		w.brk()
	}
}

// inline appends an inline node to the current line.
func (w *writer) inline(n *node, depth int) {
	switch n.kind {
	case textNode:
		w.text(depth, w.source(n))
	case verbatimNode:
		w.put(depth, w.source(n))
	default:
		w.put(depth, w.startTag(n))
		for c := n.first; c >= 0; c = w.nodes[c].next {
			w.inline(&w.nodes[c], depth)
		}
		w.put(depth, w.endTag(n))
	}
}
