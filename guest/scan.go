package guest

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// The byte scanners of JSON strings, shared by the fast decoder and the
// encoder. Go's WebAssembly code takes every jump (a loop's iteration, a
// taken branch) through its function's dispatch loop, which costs far more
// than the instructions around it: a br_table, a fuel test, and fuel
// metering may charge it most of the function's instructions. So these
// test 32 bytes an iteration with word arithmetic, find the byte they stop
// at without another loop, and validate UTF-8 without branches.

// SWAR constants: a byte repeated, and the high bit of every byte.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// load64 returns the 8 bytes at d[i:], little-endian.
func load64(d []byte, i int) uint64 { return binary.LittleEndian.Uint64(d[i:]) }

// specialMask has the high bit of every byte of x that a JSON string
// cannot hold as is ('"', '\\', a control character) or that is not
// ASCII. Above the lowest bit set it may have false positives; the lowest
// is exact.
func specialMask(x uint64) uint64 {
	q := x ^ (lsb * '"')
	s := x ^ (lsb * '\\')
	return (x | (x-lsb*0x20)&^x | (q-lsb)&^q | (s-lsb)&^s) & msb
}

// quoteMask has the high bit of the bytes '"' and '\\' of x; the lowest
// bit set is exact.
func quoteMask(x uint64) uint64 {
	q := x ^ (lsb * '"')
	s := x ^ (lsb * '\\')
	return ((q-lsb)&^q | (s-lsb)&^s) & msb
}

// plainEnd returns the index of the first byte at or after i that is
// '"', '\\', a control character or not ASCII; len(d) if there is none.
func plainEnd(d []byte, i int) int {
	for ; i+32 <= len(d); i += 32 {
		m0, m1 := specialMask(load64(d, i)), specialMask(load64(d, i+8))
		m2, m3 := specialMask(load64(d, i+16)), specialMask(load64(d, i+24))
		if m0|m1|m2|m3 != 0 {
			switch {
			case m0 != 0:
				return i + bits.TrailingZeros64(m0)/8
			case m1 != 0:
				return i + 8 + bits.TrailingZeros64(m1)/8
			case m2 != 0:
				return i + 16 + bits.TrailingZeros64(m2)/8
			}
			return i + 24 + bits.TrailingZeros64(m3)/8
		}
	}
	for ; i+8 <= len(d); i += 8 {
		if m := specialMask(load64(d, i)); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	if i < len(d) && len(d) >= 8 {
		// The last word, its bytes before i shifted out: the zero bytes
		// shifted in stop the scan at len(d).
		return i + bits.TrailingZeros64(specialMask(load64(d, len(d)-8)>>(8*(i-len(d)+8))))/8
	}
	for ; i < len(d); i++ {
		if c := d[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return i
		}
	}
	return i
}

// quoteOrBackslash returns the index of the first '"' or '\\' at or after
// i, or len(d).
func quoteOrBackslash(d []byte, i int) int {
	for ; i+32 <= len(d); i += 32 {
		m0, m1 := quoteMask(load64(d, i)), quoteMask(load64(d, i+8))
		m2, m3 := quoteMask(load64(d, i+16)), quoteMask(load64(d, i+24))
		if m0|m1|m2|m3 != 0 {
			switch {
			case m0 != 0:
				return i + bits.TrailingZeros64(m0)/8
			case m1 != 0:
				return i + 8 + bits.TrailingZeros64(m1)/8
			case m2 != 0:
				return i + 16 + bits.TrailingZeros64(m2)/8
			}
			return i + 24 + bits.TrailingZeros64(m3)/8
		}
	}
	for ; i+8 <= len(d); i += 8 {
		if m := quoteMask(load64(d, i)); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(d); i++ {
		if c := d[i]; c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

// quoteEnd returns the index of the '"' that ends the JSON string whose
// contents start at i, skipping escapes, or -1.
func quoteEnd(d []byte, i int) int {
	for {
		i = quoteOrBackslash(d, i)
		switch {
		case i >= len(d):
			return -1
		case d[i] == '"':
			return i
		}
		i += 2
	}
}

// textEnd returns the index of the first byte at or after i that is '"',
// '\\', a control character or the start of invalid UTF-8 (where
// utf8.DecodeRune returns RuneError of size 1); len(d) if there is none.
//
// Each iteration steps over a word's plain ASCII prefix and the character
// after it, without a branch: text that mixes ASCII and other characters
// costs an iteration per character that is not ASCII, long ASCII runs go
// to plainEnd.
func textEnd(d []byte, i int) int {
	for i+8 <= len(d) {
		w := load64(d, i)
		m := specialMask(w)
		if m == 0 {
			i = plainEnd(d, i+8)
			continue
		}
		a := bits.TrailingZeros64(m) / 8    // plain bytes before the special one
		n := runeSize(uint32(w >> (8 * a))) // 0 unless it starts a valid character within w
		if a+n == 0 {
			return i
		}
		i += a + n
	}
	for i < len(d) {
		if c := d[i]; c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		n := runeSizeAt(d, i)
		if n == 0 {
			return i
		}
		i += n
	}
	return i
}

// runeTable describes each byte as the first of a UTF-8 sequence (RFC
// 3629: no overlong forms, no surrogates, nothing above U+10FFFF): its
// length n (0 for ASCII and for a byte no valid sequence starts with), the
// range lo to lo+span of the byte that follows it, and the 0xC0 mask of
// the continuation bytes after that: n | lo<<8 | span<<16 | mask<<32.
var runeTable = func() (t [256]uint64) {
	set := func(from, to int, n, lo, hi uint64) {
		mask := uint64(0x00C00000) // the third byte
		switch n {
		case 2:
			mask = 0
		case 4:
			mask = 0xC0C00000
		}
		for c := from; c <= to; c++ {
			t[c] = n | lo<<8 | (hi-lo)<<16 | mask<<32
		}
	}
	set(0xC2, 0xDF, 2, 0x80, 0xBF)
	set(0xE0, 0xE0, 3, 0xA0, 0xBF)
	set(0xE1, 0xEC, 3, 0x80, 0xBF)
	set(0xED, 0xED, 3, 0x80, 0x9F)
	set(0xEE, 0xEF, 3, 0x80, 0xBF)
	set(0xF0, 0xF0, 4, 0x90, 0xBF)
	set(0xF1, 0xF3, 4, 0x80, 0xBF)
	set(0xF4, 0xF4, 4, 0x80, 0x8F)
	return t
}()

// runeSize returns the length of the valid multi-byte UTF-8 sequence that
// the 4 bytes w (little-endian) start with, or 0. It has no branches, so
// that it is inlined and costs no jump.
func runeSize(w uint32) int {
	t := runeTable[byte(w)]
	d1 := int(w>>8&0xFF) - int(t>>8&0xFF)    // the second byte less lo
	cont := uint64(w^0x80808080) & (t >> 32) // continuation bytes that are not
	bad := uint64(d1|(int(t>>16&0xFF)-d1))>>63 | (cont|-cont)>>63
	return int(t&0xFF) &^ -int(bad)
}

// runeSizeAt is runeSize at d[i], for the last bytes of d.
func runeSizeAt(d []byte, i int) int {
	var w [4]byte
	copy(w[:], d[i:])
	return runeSize(binary.LittleEndian.Uint32(w[:]))
}
