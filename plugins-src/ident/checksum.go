package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/checksum"
)

// checksumInput is the checksum service's parameters.
type checksumInput struct {
	Operation string `json:"operation" doc:"compute: the checksum of the text's UTF-8 bytes."`
	Text      string `json:"text" maxLength:"130048" doc:"The text; its UTF-8 bytes are summed."`
	Algorithm string `json:"algorithm" enum:"crc32,crc32c,adler32" doc:"crc32: CRC-32 with the IEEE polynomial (zlib, gzip, PNG). crc32c: CRC-32C, Castagnoli's polynomial (iSCSI, ext4). adler32: Adler-32 (RFC 1950). None of them resists tampering: use hmac for that."`
}

// checksumOutput is its result.
type checksumOutput struct {
	Hex   string `json:"hex" doc:"The checksum as 8 lower-case hex digits."`
	Value uint32 `json:"value" doc:"The checksum as an unsigned 32-bit integer."`
}

func computeChecksum(ctx *guest.Context, in checksumInput) (checksumOutput, error) {
	v, err := checksum.Sum(in.Text, checksum.Algorithm(in.Algorithm))
	if err != nil {
		return checksumOutput{}, bundled.ToolError(err, map[error]string{checksum.ErrAlgorithm: "unknown algorithm"})
	}
	const digits = "0123456789abcdef"
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i] = digits[v>>(4*(7-i))&0xf]
	}
	return checksumOutput{Hex: string(b), Value: v}, nil
}
