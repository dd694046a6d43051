package unixtime

import (
	"errors"
	"math"
	"testing"
)

// Vectors: RFC 3339 §5.8's examples (1985-04-12T23:20:50.52Z,
// 1996-12-19T16:39:57-08:00), and the instants GNU date prints for
// `date -u -d @N --rfc-3339=ns`.
func TestFormat(t *testing.T) {
	tests := []struct {
		value  int64
		unit   Unit
		offset string
		want   string
	}{
		{0, Seconds, "Z", "1970-01-01T00:00:00Z"},
		{482196050520, Milliseconds, "Z", "1985-04-12T23:20:50.52Z"},
		{851042397, Seconds, "-08:00", "1996-12-19T16:39:57-08:00"},
		{1700000000, Seconds, "+05:30", "2023-11-15T03:43:20+05:30"},
		{-1, Seconds, "Z", "1969-12-31T23:59:59Z"},
		{-1, Milliseconds, "Z", "1969-12-31T23:59:59.999Z"},
		{1700000000123456, Microseconds, "+00:00", "2023-11-14T22:13:20.123456Z"},
		{math.MaxInt64, Nanoseconds, "Z", "2262-04-11T23:47:16.854775807Z"},
		{253402300799, Seconds, "Z", "9999-12-31T23:59:59Z"},
		{-62167219200, Seconds, "Z", "0000-01-01T00:00:00Z"},
	}
	for _, tt := range tests {
		if got, err := Format(tt.value, tt.unit, tt.offset); err != nil || got != tt.want {
			t.Errorf("Format(%d, %s, %s) = %q, %v, want %q", tt.value, tt.unit, tt.offset, got, err, tt.want)
		}
	}
	for _, bad := range []struct {
		value  int64
		unit   Unit
		offset string
		err    error
	}{
		{253402300800, Seconds, "Z", ErrRange},
		{253402300799, Seconds, "+01:00", ErrRange},
		{-62167219200, Seconds, "-01:00", ErrRange},
		{math.MaxInt64, Seconds, "Z", ErrRange},
		{math.MinInt64, Milliseconds, "Z", ErrRange},
		{0, "min", "Z", ErrUnit},
		{0, Seconds, "+24:00", ErrOffset},
		{0, Seconds, "+0100", ErrOffset},
		{0, Seconds, "Europe/Rome", ErrOffset},
		{0, Seconds, "z", ErrOffset},
	} {
		if _, err := Format(bad.value, bad.unit, bad.offset); !errors.Is(err, bad.err) {
			t.Errorf("Format(%d, %s, %s): %v, want %v", bad.value, bad.unit, bad.offset, err, bad.err)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		text string
		want Instant
	}{
		{"1985-04-12T23:20:50.52Z", Instant{482196050, 482196050520, 520000000, "1985-04-12T23:20:50.52Z"}},
		{"1996-12-19T16:39:57-08:00", Instant{851042397, 851042397000, 0, "1996-12-20T00:39:57Z"}},
		{"1969-12-31T23:59:59.9995Z", Instant{-1, -1, 999500000, "1969-12-31T23:59:59.9995Z"}},
		{"1970-01-01T01:00:00+01:00", Instant{0, 0, 0, "1970-01-01T00:00:00Z"}},
	}
	for _, tt := range tests {
		if got, err := Parse(tt.text); err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %+v, %v, want %+v", tt.text, got, err, tt.want)
		}
	}
	// RFC 3339 §5.8's leap second and other text Unix time cannot hold.
	for _, bad := range []string{"1990-12-31T23:59:60Z", "2023-11-14 22:13:20Z", "2023-11-14T22:13:20", "2023-02-30T00:00:00Z", "", "1700000000"} {
		if _, err := Parse(bad); !errors.Is(err, ErrLayout) {
			t.Errorf("Parse(%q): %v", bad, err)
		}
	}
}
