// Package querystring parses a URL query string into its ordered
// name/value pairs and builds one from pairs, with the
// application/x-www-form-urlencoded rules browsers and net/url use ('+'
// is a space, names and values percent-encoded as the url tool's query
// component does). Unlike net/url.ParseQuery it keeps the pairs in order
// and repeated names apart, and it locates a bad escape in the whole text.
package querystring

import (
	"errors"
	"strings"

	"github.com/toolhost/toolhost/plugins-src/internal/percent"
	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

// MaxPairs bounds the pairs parsed or built.
const MaxPairs = 10000

// Pair is one name=value pair. HasValue is false for a bare name ("a" in
// "a&b=1"), which Build writes back without '='.
type Pair struct {
	Key      string
	Value    string
	HasValue bool
}

// ErrTooMany is returned when a query holds more than MaxPairs pairs.
var ErrTooMany = errors.New("querystring: more than 10000 pairs")

const subject = "text is not a valid query string"

// Parse splits text into its pairs. text may be a bare query ("a=1&b=2"),
// one starting with '?', or a whole URL, whose query is the part after
// the first '?'; a fragment ('#' onwards) is ignored. Pairs are separated
// by '&'; empty ones ("a=1&&b=2") are skipped. A ';' is an ordinary
// character, as in net/url since Go 1.17 and in the WHATWG URL standard.
func Parse(text string) ([]Pair, error) {
	start := 0
	if i := strings.IndexByte(text, '?'); i >= 0 {
		start = i + 1
	}
	end := len(text)
	if i := strings.IndexByte(text[start:], '#'); i >= 0 {
		end = start + i
	}
	pairs := []Pair{}
	for at := start; at < end; {
		seg := text[at:end]
		if i := strings.IndexByte(seg, '&'); i >= 0 {
			seg = seg[:i]
		}
		if seg != "" {
			if len(pairs) == MaxPairs {
				return nil, ErrTooMany
			}
			p, err := pair(text, at, seg)
			if err != nil {
				return nil, err
			}
			pairs = append(pairs, p)
		}
		at += len(seg) + 1
	}
	return pairs, nil
}

// pair decodes the segment seg, which starts at byte at of text.
func pair(text string, at int, seg string) (Pair, error) {
	k, v, has := strings.Cut(seg, "=")
	key, err := decode(text, at, k)
	if err != nil {
		return Pair{}, err
	}
	val, err := decode(text, at+len(k)+1, v)
	return Pair{Key: key, Value: val, HasValue: has}, err
}

// decode decodes s, which starts at byte at of text, and locates a fault
// in text.
func decode(text string, at int, s string) (string, error) {
	out, err := percent.Decode(s, percent.Query)
	var pe *textpos.Error
	if errors.As(err, &pe) {
		return "", textpos.New(text, at+pe.Position.Offset, subject, pe.Reason)
	}
	return out, err
}

// Build writes pairs as a query string without a leading '?': names and
// values encoded as HTML forms do (space as '+', everything but
// A–Z a–z 0–9 - . _ ~ percent-encoded), joined by '&'.
func Build(pairs []Pair) (string, error) {
	if len(pairs) > MaxPairs {
		return "", ErrTooMany
	}
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		k, err := percent.Encode(p.Key, percent.Query)
		if err != nil {
			return "", err
		}
		b.WriteString(k)
		if p.HasValue {
			v, err := percent.Encode(p.Value, percent.Query)
			if err != nil {
				return "", err
			}
			b.WriteByte('=')
			b.WriteString(v)
		}
	}
	return b.String(), nil
}
