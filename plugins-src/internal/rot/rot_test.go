package rot

import (
	"errors"
	"testing"
)

// The ROT13 and ROT47 vectors are what the reference one-liners give:
// tr 'A-Za-z' 'N-ZA-Mn-za-m' and tr '!-~' 'P-~!-O'.
func TestRot(t *testing.T) {
	if got := Rot13("Why did the chicken cross the road?"); got != "Jul qvq gur puvpxra pebff gur ebnq?" {
		t.Errorf("Rot13 = %q", got)
	}
	if got := Rot13("The Quick Brown Fox Jumps Over The Lazy Dog. Héllo 😀"); got != "Gur Dhvpx Oebja Sbk Whzcf Bire Gur Ynml Qbt. Uéyyb 😀" {
		t.Errorf("Rot13 = %q", got)
	}
	if got := Rot47("The Quick Brown Fox Jumps Over The Lazy Dog."); got != "%96 \"F:4< qC@H? u@I yF>AD ~G6C %96 {2KJ s@8]" {
		t.Errorf("Rot47 = %q", got)
	}
	if got := Rot47(Rot47("Hello, World! ~ 123")); got != "Hello, World! ~ 123" {
		t.Errorf("Rot47 twice = %q", got)
	}
	tests := []struct {
		in    string
		shift int
		want  string
	}{
		{"abc xyz ABC XYZ", 3, "def abc DEF ABC"},
		{"def abc", -3, "abc xyz"},
		{"Attack at dawn", 0, "Attack at dawn"},
		{"Zz", 25, "Yy"},
		{"Zz", -25, "Aa"},
	}
	for _, tt := range tests {
		if got, err := Caesar(tt.in, tt.shift); err != nil || got != tt.want {
			t.Errorf("Caesar(%q, %d) = %q, %v; want %q", tt.in, tt.shift, got, err, tt.want)
		}
	}
	for _, s := range []int{26, -26, 100} {
		if _, err := Caesar("a", s); !errors.Is(err, ErrShift) {
			t.Errorf("Caesar(shift %d): %v", s, err)
		}
	}
}
