package cidrcalc

import (
	"errors"
	"testing"
)

// Vectors: RFC 1918's blocks, RFC 3021's /31, RFC 3849's documentation
// prefix 2001:db8::/32, and the values ipcalc(1) prints for them.
func TestDescribe(t *testing.T) {
	tests := []struct {
		in   string
		want Info
	}{
		{"192.168.1.77/24", Info{4, "192.168.1.77", "192.168.1.0/24", 24, "255.255.255.0", "192.168.1.0", "192.168.1.255", "192.168.1.255", "192.168.1.1", "192.168.1.254", "256", "254"}},
		{"10.0.0.0/8", Info{4, "10.0.0.0", "10.0.0.0/8", 8, "255.0.0.0", "10.0.0.0", "10.255.255.255", "10.255.255.255", "10.0.0.1", "10.255.255.254", "16777216", "16777214"}},
		{"172.16.5.4/12", Info{4, "172.16.5.4", "172.16.0.0/12", 12, "255.240.0.0", "172.16.0.0", "172.31.255.255", "172.31.255.255", "172.16.0.1", "172.31.255.254", "1048576", "1048574"}},
		{"198.51.100.6/31", Info{4, "198.51.100.6", "198.51.100.6/31", 31, "255.255.255.254", "198.51.100.6", "198.51.100.7", "", "198.51.100.6", "198.51.100.7", "2", "2"}},
		{"203.0.113.9", Info{4, "203.0.113.9", "203.0.113.9/32", 32, "255.255.255.255", "203.0.113.9", "203.0.113.9", "", "203.0.113.9", "203.0.113.9", "1", "1"}},
		{"0.0.0.0/0", Info{4, "0.0.0.0", "0.0.0.0/0", 0, "0.0.0.0", "0.0.0.0", "255.255.255.255", "255.255.255.255", "0.0.0.1", "255.255.255.254", "4294967296", "4294967294"}},
		{"2001:DB8::1/32", Info{6, "2001:db8::1", "2001:db8::/32", 32, "ffff:ffff::", "2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "", "2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "79228162514264337593543950336", "79228162514264337593543950336"}},
		{"::/0", Info{6, "::", "::/0", 0, "::", "::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "", "::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "340282366920938463463374607431768211456", "340282366920938463463374607431768211456"}},
		{"fe80::1/127", Info{6, "fe80::1", "fe80::/127", 127, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe", "fe80::", "fe80::1", "", "fe80::", "fe80::1", "2", "2"}},
	}
	for _, tt := range tests {
		got, err := Describe(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Describe(%q) =\n%+v, %v, want\n%+v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "192.168.1.0/33", "192.168.1/24", "2001:db8::/129", "fe80::1%eth0/64", "fe80::1%eth0", "example.com", "10.0.0.0/-1", "010.0.0.0/8"} {
		if _, err := Describe(bad); !errors.Is(err, ErrPrefix) {
			t.Errorf("Describe(%q): %v", bad, err)
		}
	}
}

func TestContains(t *testing.T) {
	tests := []struct {
		prefix, addr string
		want         bool
	}{
		{"192.168.1.0/24", "192.168.1.255", true},
		{"192.168.1.77/24", "192.168.1.3", true},
		{"192.168.1.0/24", "192.168.2.0", false},
		{"2001:db8::/32", "2001:db8:ffff::1", true},
		{"2001:db8::/32", "2001:db9::", false},
		{"0.0.0.0/0", "::ffff:1.2.3.4", false},
		{"::/0", "1.2.3.4", false},
	}
	for _, tt := range tests {
		if got, _, err := Contains(tt.prefix, tt.addr); err != nil || got != tt.want {
			t.Errorf("Contains(%q, %q) = %v, %v", tt.prefix, tt.addr, got, err)
		}
	}
	if _, _, err := Contains("10.0.0.0/8", "10.0.0.0/8"); !errors.Is(err, ErrAddress) {
		t.Errorf("prefix as address: %v", err)
	}
	if _, _, err := Contains("10.0.0.0/88", "10.0.0.1"); !errors.Is(err, ErrPrefix) {
		t.Errorf("bad prefix: %v", err)
	}
}
