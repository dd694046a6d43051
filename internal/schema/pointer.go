package schema

import (
	"net/url"
	"strconv"
	"strings"
)

// pointer returns the JSON pointer (RFC 6901) made of segs: "" for the
// document root, "/a/b~1c" for ["a", "b/c"].
func pointer(segs []string) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(escapeToken(s))
	}
	return b.String()
}

func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// child returns segs extended by more, never sharing segs' backing array.
func child(segs []string, more ...string) []string {
	out := make([]string, 0, len(segs)+len(more))
	return append(append(out, segs...), more...)
}

// refKind classifies a reference string.
type refKind int

const (
	refLocal     refKind = iota // "#" or a well-formed "#/..." pointer
	refNotLocal                 // anything else: a URL, a relative path, an anchor
	refMalformed                // "#/..." that is not a valid pointer
)

// parseRef parses a local reference into its pointer tokens. The fragment is
// percent-decoded first, then split at "/", then each token has ~1 and ~0
// unescaped, as RFC 6901 section 6 prescribes for URI fragments.
func parseRef(ref string) ([]string, refKind) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, refNotLocal
	}
	if frag == "" {
		return nil, refLocal
	}
	if frag[0] != '/' {
		// A plain-name fragment ("#foo") is an anchor, not a pointer.
		return nil, refNotLocal
	}
	dec, err := url.PathUnescape(frag)
	if err != nil {
		return nil, refMalformed
	}
	toks := strings.Split(dec[1:], "/")
	for i, t := range toks {
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1')) {
				return nil, refMalformed
			}
		}
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, refLocal
}

// resolve returns the value at toks in doc.
func resolve(doc any, toks []string) (any, bool) {
	cur := doc
	for _, t := range toks {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[t]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, ok := arrayIndex(t)
			if !ok || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// arrayIndex parses an RFC 6901 array index: "0" or digits without a
// leading zero.
func arrayIndex(t string) (int, bool) {
	if t == "" || len(t) > 9 || (len(t) > 1 && t[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(t)
	return n, err == nil
}

// tooDeep reports the location of the first value nested deeper than limit
// (a scalar has depth 0, [] has depth 1, as in package wire). Object names
// are visited in sorted order so that the answer is deterministic. The
// recursion itself is bounded by limit, so a cyclic Go value terminates.
func tooDeep(v any, limit int) ([]string, bool) {
	var stack []string
	var walk func(v any, limit int) bool
	walk = func(v any, limit int) bool {
		switch v := v.(type) {
		case map[string]any:
			if limit == 0 {
				return true
			}
			for _, k := range sortedKeys(v) {
				stack = append(stack, k)
				if walk(v[k], limit-1) {
					return true
				}
				stack = stack[:len(stack)-1]
			}
		case []any:
			if limit == 0 {
				return true
			}
			for i, e := range v {
				stack = append(stack, strconv.Itoa(i))
				if walk(e, limit-1) {
					return true
				}
				stack = stack[:len(stack)-1]
			}
		}
		return false
	}
	if walk(v, limit) {
		return stack, true
	}
	return nil, false
}
