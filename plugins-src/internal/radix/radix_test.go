package radix

import (
	"errors"
	"strings"
	"testing"
)

// The vectors are checked against Python's arbitrary-precision int:
// int(value, from), then format(n, 'x') or repeated divmod by the base.
func TestConvert(t *testing.T) {
	tests := []struct {
		value    string
		from, to int
		upper    bool
		want     string
	}{
		{"255", 10, 16, false, "ff"},
		{"255", 10, 16, true, "FF"},
		{"FF", 16, 2, false, "11111111"},
		{"-101", 2, 10, false, "-5"},
		{"+0777", 8, 10, false, "511"},
		{"000", 10, 2, false, "0"},
		{"-0", 10, 16, false, "0"},
		{"zz", 36, 10, false, "1295"},
		{"18446744073709551616", 10, 16, false, "10000000000000000"},
		{"340282366920938463463374607431768211455", 10, 36, false, "f5lxx1zz5pnorynqglhzmsp33"},
		{"1" + strings.Repeat("0", 100), 10, 16, false, "1249ad2594c37ceb0b2784c4ce0bf38ace408e211a7caab24308a82e8f10000000000000000000000000"},
	}
	for _, tt := range tests {
		if got, err := Convert(tt.value, tt.from, tt.to, tt.upper); err != nil || got != tt.want {
			t.Errorf("Convert(%q, %d, %d) = %q, %v, want %q", tt.value, tt.from, tt.to, got, err, tt.want)
		}
	}
}

func TestFaults(t *testing.T) {
	for value, want := range map[string]string{
		"12a":   "value is not a base-10 integer: digit not valid in base 10 at line 1, column 3 (byte 2)",
		"":      "value is not a base-10 integer: no digits at line 1, column 1 (byte 0)",
		"-":     "value is not a base-10 integer: no digits at line 1, column 2 (byte 1)",
		"1 000": "value is not a base-10 integer: not a digit (0-9, a-z) at line 1, column 2 (byte 1)",
		"0x10":  "value is not a base-10 integer: digit not valid in base 10 at line 1, column 2 (byte 1)",
	} {
		if _, err := Convert(value, 10, 2, false); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", value, err, want)
		}
	}
	if _, err := Convert("1", 1, 10, false); !errors.Is(err, ErrBase) {
		t.Errorf("base 1: %v", err)
	}
	if _, err := Convert("1", 10, 37, false); !errors.Is(err, ErrBase) {
		t.Errorf("base 37: %v", err)
	}
	if _, err := Convert("-"+strings.Repeat("1", MaxDigits+1), 2, 10, false); !errors.Is(err, ErrTooLong) {
		t.Errorf("too long: %v", err)
	}
	if _, err := Convert(strings.Repeat("z", MaxDigits), 36, 2, false); err != nil {
		t.Errorf("at the bound: %v", err)
	}
}
