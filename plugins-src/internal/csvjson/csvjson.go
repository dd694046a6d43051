// Package csvjson converts CSV (RFC 4180, read with encoding/csv) to JSON
// and JSON to CSV. Reading keeps every field a string unless asked to type
// them; writing turns a JSON array of objects (or of arrays) into rows.
package csvjson

import (
	"encoding/csv"
	"errors"
	"io"
	"regexp"
	"strings"

	"github.com/toolhost/toolhost/plugins-src/internal/jsontree"
	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// Delimiters maps the delimiter names the tool accepts to their character.
var Delimiters = map[string]rune{"comma": ',', "semicolon": ';', "tab": '\t', "pipe": '|'}

var (
	// ErrDelimiter is returned for a delimiter name not in Delimiters.
	ErrDelimiter = errors.New("csvjson: unknown delimiter")
	// ErrShape is returned when the JSON to write is not an array whose
	// elements are all objects or all arrays.
	ErrShape = errors.New("csvjson: the JSON must be an array of objects or an array of arrays")
)

// ReadOptions control ToJSON.
type ReadOptions struct {
	Delimiter string // a name in Delimiters
	// Header takes the first row as the column names: the result is an
	// array of objects. Without it, an array of arrays of strings.
	Header bool
	// Typed writes fields that are JSON numbers as numbers, true and false
	// as booleans and empty fields as null; others stay strings.
	Typed bool
	// LazyQuotes accepts a '"' inside an unquoted field and a lone '"'
	// inside a quoted one (encoding/csv's LazyQuotes).
	LazyQuotes bool
	// Ragged accepts rows of different lengths; a short row's missing
	// columns are absent from its object.
	Ragged bool
}

const subject = "text is not valid CSV"

// number is RFC 8259's number grammar (§6).
var number = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// ToJSON reads text as CSV into a JSON array.
func ToJSON(text string, o ReadOptions) (jsontree.Value, error) {
	d, ok := Delimiters[o.Delimiter]
	if !ok {
		return jsontree.Value{}, ErrDelimiter
	}
	r := csv.NewReader(strings.NewReader(text))
	r.Comma = d
	r.LazyQuotes = o.LazyQuotes
	if o.Ragged {
		r.FieldsPerRecord = -1
	}
	out := jsontree.Value{Kind: jsontree.Array, Items: []jsontree.Value{}}
	var header []string
	for row := 0; ; row++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return jsontree.Value{}, fault(text, err)
		}
		if o.Header && row == 0 {
			seen := map[string]bool{}
			for _, name := range rec {
				if seen[name] {
					line, _ := r.FieldPos(0)
					return jsontree.Value{}, textpos.New(text, lineStart(text, line), subject, "two columns of the header row have the same name")
				}
				seen[name] = true
			}
			header = rec
			continue
		}
		if !o.Header {
			v := jsontree.Value{Kind: jsontree.Array, Items: make([]jsontree.Value, len(rec))}
			for i, f := range rec {
				v.Items[i] = field(f, o.Typed)
			}
			out.Items = append(out.Items, v)
			continue
		}
		if len(rec) > len(header) {
			line, _ := r.FieldPos(len(header))
			return jsontree.Value{}, textpos.New(text, lineStart(text, line), subject, "row has more fields than the header row")
		}
		v := jsontree.Value{Kind: jsontree.Object, Members: make([]jsontree.Member, len(rec))}
		for i, f := range rec {
			v.Members[i] = jsontree.Member{Key: header[i], Value: field(f, o.Typed)}
		}
		out.Items = append(out.Items, v)
	}
	return out, nil
}

func field(f string, typed bool) jsontree.Value {
	if typed {
		switch {
		case f == "":
			return jsontree.Value{Kind: jsontree.Null}
		case f == "true" || f == "false":
			return jsontree.Value{Kind: jsontree.Bool, Bool: f == "true"}
		case len(f) <= 400 && number.MatchString(f):
			return jsontree.Value{Kind: jsontree.Number, Text: f}
		}
	}
	return jsontree.Value{Kind: jsontree.String, Text: f}
}

// fault turns an encoding/csv error into a located *textpos.Error with
// the package's own reason (encoding/csv's messages name no text either).
func fault(text string, err error) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return err
	}
	reason := "malformed field"
	switch {
	case errors.Is(pe.Err, csv.ErrQuote):
		reason = "extraneous or missing '\"' in a quoted field"
	case errors.Is(pe.Err, csv.ErrBareQuote):
		reason = "'\"' in an unquoted field (lazy_quotes accepts it)"
	case errors.Is(pe.Err, csv.ErrFieldCount):
		reason = "row has a different number of fields than the first row (ragged accepts it)"
		return textpos.New(text, lineStart(text, pe.Line), subject, reason)
	}
	return textpos.New(text, lineStart(text, pe.Line)+max(pe.Column-1, 0), subject, reason)
}

// lineStart returns the offset of the first byte of line (from 1), counted
// as encoding/csv counts lines: at LF.
func lineStart(text string, line int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	return off
}

// WriteOptions control FromJSON.
type WriteOptions struct {
	Delimiter string // a name in Delimiters
	// Header writes a first row of column names (arrays of objects only).
	Header bool
	// QuoteAll quotes every field; otherwise only those that need it
	// (holding the delimiter, '"', CR or LF, or starting or ending with a
	// space).
	QuoteAll bool
	// CRLF ends rows with CR LF (RFC 4180) instead of LF.
	CRLF bool
	// MaxBytes bounds the output (0: none); past it FromJSON returns
	// jsontree.ErrTooLarge.
	MaxBytes int
}

// FromJSON writes v, an array of objects or an array of arrays, as CSV.
// An array of objects has a column for every key, in the order keys first
// appear; an object without a key leaves its field empty. Strings are
// written as they are, numbers as written, booleans as true and false,
// null as an empty field, and an object or array in a field as compact
// JSON. Every row ends with the line ending.
func FromJSON(v jsontree.Value, o WriteOptions) (string, error) {
	d, ok := Delimiters[o.Delimiter]
	if !ok {
		return "", ErrDelimiter
	}
	if v.Kind != jsontree.Array {
		return "", ErrShape
	}
	w := &writer{delim: d, quoteAll: o.QuoteAll, eol: "\n"}
	if o.CRLF {
		w.eol = "\r\n"
	}
	if len(v.Items) == 0 {
		return "", nil
	}
	switch v.Items[0].Kind {
	case jsontree.Object:
		var cols []string
		index := map[string]int{}
		for _, item := range v.Items {
			if item.Kind != jsontree.Object {
				return "", ErrShape
			}
			for _, m := range item.Members {
				if _, ok := index[m.Key]; !ok {
					index[m.Key] = len(cols)
					cols = append(cols, m.Key)
				}
			}
		}
		if o.Header {
			w.row(cols)
		}
		row := make([]string, len(cols))
		for _, item := range v.Items {
			clear(row)
			for _, m := range item.Members {
				row[index[m.Key]] = text(m.Value)
			}
			w.row(row)
			if o.MaxBytes > 0 && w.b.Len() > o.MaxBytes {
				return "", jsontree.ErrTooLarge
			}
		}
	case jsontree.Array:
		for _, item := range v.Items {
			if item.Kind != jsontree.Array {
				return "", ErrShape
			}
			row := make([]string, len(item.Items))
			for i, f := range item.Items {
				row[i] = text(f)
			}
			w.row(row)
			if o.MaxBytes > 0 && w.b.Len() > o.MaxBytes {
				return "", jsontree.ErrTooLarge
			}
		}
	default:
		return "", ErrShape
	}
	return w.b.String(), nil
}

// text is a JSON value as one CSV field.
func text(v jsontree.Value) string {
	switch v.Kind {
	case jsontree.Null:
		return ""
	case jsontree.Bool:
		if v.Bool {
			return "true"
		}
		return "false"
	case jsontree.Number, jsontree.String:
		return v.Text
	}
	s, _ := jsontree.Encode(v, 0, 0)
	return s
}

type writer struct {
	b        strings.Builder
	delim    rune
	quoteAll bool
	eol      string
}

func (w *writer) row(fields []string) {
	if len(fields) == 1 && fields[0] == "" {
		// A blank line is no row to a reader: one empty field is quoted.
		w.b.WriteString(`""`)
		w.b.WriteString(w.eol)
		return
	}
	for i, f := range fields {
		if i > 0 {
			w.b.WriteRune(w.delim)
		}
		if w.quoteAll || needsQuotes(f, w.delim) {
			w.b.WriteByte('"')
			w.b.WriteString(strings.ReplaceAll(f, `"`, `""`))
			w.b.WriteByte('"')
		} else {
			w.b.WriteString(f)
		}
	}
	w.b.WriteString(w.eol)
}

func needsQuotes(f string, delim rune) bool {
	if f == "" {
		return false
	}
	return strings.ContainsRune(f, delim) || strings.ContainsAny(f, "\"\r\n") ||
		f[0] == ' ' || f[0] == '\t' || f[len(f)-1] == ' ' || f[len(f)-1] == '\t'
}
