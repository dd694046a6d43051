package instrument

import (
	"fmt"
	"unicode/utf8"
)

// reader decodes WebAssembly's binary primitives from buf[pos:end]. Offsets
// in its errors are absolute offsets into the module. Every read checks the
// bytes that remain; nothing is allocated from a length field before that
// length has been checked against them.
type reader struct {
	buf []byte
	pos int
	end int
}

func newReader(buf []byte, start, end int) *reader {
	return &reader{buf: buf, pos: start, end: end}
}

func (r *reader) remaining() int { return r.end - r.pos }

func (r *reader) errorf(kind error, format string, args ...any) error {
	return fmt.Errorf("offset %#x: %s: %w", r.pos, fmt.Sprintf(format, args...), kind)
}

func (r *reader) errEOF() error {
	return r.errorf(ErrMalformed, "unexpected end of data")
}

func (r *reader) byte() (byte, error) {
	if r.pos >= r.end {
		return 0, r.errEOF()
	}
	b := r.buf[r.pos]
	r.pos++
	return b, nil
}

func (r *reader) bytes(n int) ([]byte, error) {
	if n < 0 || n > r.remaining() {
		return nil, r.errorf(ErrMalformed, "length %d exceeds the %d bytes that remain", n, r.remaining())
	}
	b := r.buf[r.pos : r.pos+n]
	r.pos += n
	return b, nil
}

// skip advances by n bytes.
func (r *reader) skip(n int) error {
	_, err := r.bytes(n)
	return err
}

// uleb reads an unsigned LEB128 number of at most bits bits.
func (r *reader) uleb(bits uint) (uint64, error) {
	start := r.pos
	var v uint64
	var shift uint
	for {
		b, err := r.byte()
		if err != nil {
			return 0, err
		}
		if shift+7 >= bits && b>>(bits-shift) != 0 {
			// Last permitted byte: the continuation bit and the bits beyond
			// the width must be clear.
			r.pos = start
			return 0, r.errorf(ErrMalformed, "integer too large for %d bits", bits)
		}
		v |= uint64(b&0x7f) << shift
		if b&0x80 == 0 {
			return v, nil
		}
		shift += 7
	}
}

// sleb reads a signed LEB128 number of at most bits bits.
func (r *reader) sleb(bits uint) (int64, error) {
	start := r.pos
	var v int64
	var shift uint
	for {
		b, err := r.byte()
		if err != nil {
			return 0, err
		}
		if shift+7 >= bits {
			// Last permitted byte: no continuation, and the unused high bits
			// must all equal the sign bit.
			if b&0x80 != 0 {
				r.pos = start
				return 0, r.errorf(ErrMalformed, "integer too large for %d bits", bits)
			}
			used := bits - shift         // bits of payload in this byte, 1..7
			rest := int8(b<<1) >> (used) // the high bits, sign-extended
			if rest != 0 && rest != -1 {
				r.pos = start
				return 0, r.errorf(ErrMalformed, "integer too large for %d bits", bits)
			}
		}
		v |= int64(b&0x7f) << shift
		shift += 7
		if b&0x80 == 0 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v, nil
		}
	}
}

func (r *reader) u32() (uint32, error) {
	v, err := r.uleb(32)
	return uint32(v), err
}

// count reads a vector length and checks that the vector, whose elements take
// at least minSize bytes each, fits in the bytes that remain.
func (r *reader) count(minSize int) (int, error) {
	n, err := r.u32()
	if err != nil {
		return 0, err
	}
	if uint64(n)*uint64(minSize) > uint64(r.remaining()) {
		return 0, r.errorf(ErrMalformed, "vector of %d elements does not fit in the %d bytes that remain", n, r.remaining())
	}
	return int(n), nil
}

// name reads a length-prefixed UTF-8 string.
func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(int(n))
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", r.errorf(ErrMalformed, "name is not valid UTF-8")
	}
	return string(b), nil
}

// appendULEB appends v as unsigned LEB128.
func appendULEB(dst []byte, v uint64) []byte {
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(dst, b)
		}
		dst = append(dst, b|0x80)
	}
}

// appendSLEB appends v as signed LEB128.
func appendSLEB(dst []byte, v int64) []byte {
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && b&0x40 == 0) || (v == -1 && b&0x40 != 0) {
			return append(dst, b)
		}
		dst = append(dst, b|0x80)
	}
}

// appendName appends a length-prefixed string.
func appendName(dst []byte, s string) []byte {
	dst = appendULEB(dst, uint64(len(s)))
	return append(dst, s...)
}
