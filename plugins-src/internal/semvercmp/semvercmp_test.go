package semvercmp

import (
	"errors"
	"testing"
)

// SemVer 2.0.0 §11: "1.0.0-alpha < 1.0.0-alpha.1 < 1.0.0-alpha.beta <
// 1.0.0-beta < 1.0.0-beta.2 < 1.0.0-beta.11 < 1.0.0-rc.1 < 1.0.0", and
// 1.0.0 < 2.0.0 < 2.1.0 < 2.1.1.
func TestPrecedence(t *testing.T) {
	order := []string{"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "2.0.0", "2.1.0", "2.1.1"}
	for i := range order {
		for j := range order {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got, _, _, err := Compare(order[i], order[j], true); err != nil || got != want {
				t.Errorf("Compare(%s, %s) = %d, %v, want %d", order[i], order[j], got, err, want)
			}
		}
	}
	// §10: build metadata does not count.
	if got, a, b, err := Compare("1.0.0+20130313144700", "v1.0+exp.sha.5114f85", false); got != 0 || a != "1.0.0+20130313144700" || b != "1.0.0+exp.sha.5114f85" || err != nil {
		t.Errorf("metadata: %d %s %s %v", got, a, b, err)
	}
	if _, _, _, err := Compare("v1.2", "1.2.0", true); !errors.Is(err, ErrA) {
		t.Errorf("strict v1.2: %v", err)
	}
	if _, _, _, err := Compare("1.2.0", "1.2.3.4", false); !errors.Is(err, ErrB) {
		t.Errorf("1.2.3.4: %v", err)
	}
	if _, _, _, err := Compare("01.2.3", "1.2.3", true); !errors.Is(err, ErrA) {
		t.Errorf("leading zero: %v", err)
	}
}

// The ranges of the library's README: ^ and ~, hyphen ranges, wildcards,
// || and the pre-release rule.
func TestMatch(t *testing.T) {
	tests := []struct {
		version, rng string
		pre          bool
		want         bool
	}{
		{"1.2.3", "^1.2.3", false, true},
		{"1.9.9", "^1.2.3", false, true},
		{"2.0.0", "^1.2.3", false, false},
		{"0.2.9", "^0.2.3", false, true},
		{"0.3.0", "^0.2.3", false, false},
		{"1.2.9", "~1.2.3", false, true},
		{"1.3.0", "~1.2.3", false, false},
		{"1.4.5", "1.2 - 1.4.5", false, true},
		{"1.4.6", "1.2 - 1.4.5", false, false},
		{"1.2.99", "1.2.x", false, true},
		{"3.0.0", ">= 1.0, < 2 || >= 3", false, true},
		{"2.5.0", ">= 1.0, < 2 || >= 3", false, false},
		{"1.2.4-beta.1", ">=1.2.0", false, false},
		{"1.2.4-beta.1", ">=1.2.0", true, true},
		{"1.2.4-beta.1", ">=1.2.4-alpha", false, true},
		{"v1.3", "*", false, true},
	}
	for _, tt := range tests {
		if got, _, err := Match(tt.version, tt.rng, false, tt.pre); err != nil || got != tt.want {
			t.Errorf("Match(%s, %q, pre %v) = %v, %v, want %v", tt.version, tt.rng, tt.pre, got, err, tt.want)
		}
	}
	if _, _, err := Match("1.x", "^1", false, false); !errors.Is(err, ErrVersion) {
		t.Errorf("1.x as a version: %v", err)
	}
	if _, _, err := Match("1.2.3", ">>1", false, false); !errors.Is(err, ErrRange) {
		t.Errorf(">>1: %v", err)
	}
	if _, v, err := Match("v2", "2", false, false); err != nil || v != "2.0.0" {
		t.Errorf("canonical: %s %v", v, err)
	}
}
