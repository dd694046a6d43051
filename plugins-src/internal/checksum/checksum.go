// Package checksum computes the non-cryptographic checksums of text's
// UTF-8 bytes: CRC-32 with the IEEE polynomial (zlib, gzip, PNG, Ethernet),
// CRC-32C with Castagnoli's (iSCSI, ext4, SCTP), and Adler-32 (zlib's
// stream trailer, RFC 1950). They detect accidental change only.
package checksum

import (
	"errors"
	"hash/adler32"
	"hash/crc32"
)

// Algorithm is a checksum; its values are the service's.
type Algorithm string

// The algorithms.
const (
	CRC32   Algorithm = "crc32"
	CRC32C  Algorithm = "crc32c"
	Adler32 Algorithm = "adler32"
)

// ErrAlgorithm is returned for an algorithm the package does not know.
var ErrAlgorithm = errors.New("checksum: unknown algorithm")

// Sum returns the checksum of text's UTF-8 bytes. crc32.MakeTable for
// Castagnoli is cheap (a 1 KiB table, built per call: a fresh instance
// pays it either way).
func Sum(text string, a Algorithm) (uint32, error) {
	b := []byte(text)
	switch a {
	case CRC32:
		return crc32.ChecksumIEEE(b), nil
	case CRC32C:
		return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)), nil
	case Adler32:
		return adler32.Checksum(b), nil
	}
	return 0, ErrAlgorithm
}
