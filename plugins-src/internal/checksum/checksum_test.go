package checksum

import (
	"errors"
	"testing"
)

// The check values: "123456789" is the catalogue's input (Greg Cook's
// CRC catalogue, reveng: CRC-32/ISO-HDLC check 0xcbf43926, CRC-32/ISCSI
// check 0xe3069283); Adler-32 of "Wikipedia" is the worked example of
// RFC 1950's algorithm (0x11e60398).
func TestSum(t *testing.T) {
	tests := []struct {
		text string
		a    Algorithm
		want uint32
	}{
		{"123456789", CRC32, 0xcbf43926},
		{"123456789", CRC32C, 0xe3069283},
		{"123456789", Adler32, 0x091e01de},
		{"Wikipedia", Adler32, 0x11e60398},
		{"", CRC32, 0},
		{"", CRC32C, 0},
		{"", Adler32, 1},
	}
	for _, tt := range tests {
		if got, err := Sum(tt.text, tt.a); err != nil || got != tt.want {
			t.Errorf("%s %q = %08x, %v, want %08x", tt.a, tt.text, got, err, tt.want)
		}
	}
	if _, err := Sum("x", "crc16"); !errors.Is(err, ErrAlgorithm) {
		t.Errorf("crc16: %v", err)
	}
}
