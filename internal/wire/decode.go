package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

var bom = []byte{0xEF, 0xBB, 0xBF}

// Decode parses data as exactly one JSON value within lim. See the package
// documentation for what it refuses. It never panics and never builds a
// value deeper than lim allows.
func Decode(data []byte, lim Limits) (any, error) {
	countDecode(data)
	if lim.MaxBytes > 0 && len(data) > lim.MaxBytes {
		return nil, &Error{Offset: int64(lim.MaxBytes), Err: ErrTooLarge}
	}
	if bytes.HasPrefix(data, bom) {
		return nil, &Error{Offset: 0, Err: ErrByteOrderMark}
	}
	if !utf8.Valid(data) {
		return nil, invalidUTF8(data)
	}
	if v, ok := fastDecode(data, lim.depth()); ok {
		return v, nil
	}
	return tokenDecode(data, lim)
}

// tokenDecode is Decode on the tokenizer's path, for the texts the fast
// path gives up on (fast.go): it decides every refusal and its offset.
func tokenDecode(data []byte, lim Limits) (any, error) {
	d := decoder{
		data:     data,
		dec:      jsontext.NewDecoder(bytes.NewBuffer(data)),
		maxDepth: lim.depth(),
	}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	end := d.dec.InputOffset()
	if rest := bytes.TrimLeft(data[end:], " \t\r\n"); len(rest) > 0 {
		return nil, &Error{Offset: int64(len(data) - len(rest)), Err: ErrTrailingData}
	}
	return v, nil
}

type decoder struct {
	data     []byte
	dec      *jsontext.Decoder
	maxDepth int
}

// value reads one value whose container depth is depth.
func (d *decoder) value(depth int) (any, error) {
	tok, err := d.dec.ReadToken()
	if err != nil {
		return nil, d.classify(err)
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 'f', 't':
		return tok.Bool(), nil
	case '"':
		return tok.String(), nil
	case '0':
		lit := tok.String()
		if !finite(lit) {
			return nil, &Error{Offset: d.dec.InputOffset() - int64(len(lit)), Err: ErrNonFinite}
		}
		return json.Number(lit), nil
	case '{':
		if depth+1 > d.maxDepth {
			return nil, &Error{Offset: d.dec.InputOffset() - 1, Err: ErrTooDeep}
		}
		obj := make(map[string]any)
		for d.dec.PeekKind() != '}' {
			tok, err := d.dec.ReadToken()
			if err != nil {
				return nil, d.classify(err)
			}
			// A token is only valid until the next read.
			name := tok.String()
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			obj[name] = v
		}
		if _, err := d.dec.ReadToken(); err != nil {
			return nil, d.classify(err)
		}
		return obj, nil
	case '[':
		if depth+1 > d.maxDepth {
			return nil, &Error{Offset: d.dec.InputOffset() - 1, Err: ErrTooDeep}
		}
		arr := []any{}
		for d.dec.PeekKind() != ']' {
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if _, err := d.dec.ReadToken(); err != nil {
			return nil, d.classify(err)
		}
		return arr, nil
	}
	// ReadToken never returns a closing delimiter where a value is expected
	// without an error; this is unreachable but kept total.
	return nil, &Error{Offset: d.dec.InputOffset(), Err: ErrSyntax}
}

// classify maps a jsontext error to this package's sentinels.
func (d *decoder) classify(err error) error {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return &Error{Offset: int64(len(d.data)), Err: ErrSyntax}
		}
		return &Error{Offset: d.dec.InputOffset(), Err: ErrSyntax}
	}
	switch {
	case errors.Is(se.Err, jsontext.ErrDuplicateName):
		return &Error{Offset: se.ByteOffset, Err: ErrDuplicateName}
	case surrogateEscapeAt(d.data, se.ByteOffset):
		return &Error{Offset: se.ByteOffset, Err: ErrLoneSurrogate}
	}
	return &Error{Offset: se.ByteOffset, Err: ErrSyntax}
}

// finite reports whether a JSON number literal is finite as a float64.
// Underflow to zero is finite; only overflow to ±Inf is refused.
func finite(lit string) bool {
	f, err := strconv.ParseFloat(lit, 64)
	return err == nil || !math.IsInf(f, 0)
}

// invalidUTF8 reports where data stops being UTF-8, distinguishing an
// encoded surrogate (ED A0..BF xx), which is a lone surrogate written raw.
func invalidUTF8(data []byte) *Error {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			if i+2 < len(data) && data[i] == 0xED && data[i+1] >= 0xA0 && data[i+1] <= 0xBF {
				return &Error{Offset: int64(i), Err: ErrLoneSurrogate}
			}
			return &Error{Offset: int64(i), Err: ErrInvalidUTF8}
		}
		i += n
	}
	return &Error{Offset: 0, Err: ErrInvalidUTF8}
}

// surrogateEscapeAt reports whether data holds a \u escape of a UTF-16
// surrogate (D800–DFFF) at off. The tokenizer reports an unpaired surrogate
// at the offset of its escape; a paired one is never refused.
func surrogateEscapeAt(data []byte, off int64) bool {
	if off < 0 || off+6 > int64(len(data)) {
		return false
	}
	esc := data[off : off+6]
	if esc[0] != '\\' || esc[1] != 'u' {
		return false
	}
	v, err := strconv.ParseUint(string(esc[2:]), 16, 16)
	return err == nil && v >= 0xD800 && v <= 0xDFFF
}
