package unorm

import (
	"errors"
	"testing"
)

// Vectors from UAX #15 (Unicode Normalization Forms), figures 3–6 and
// section 1.2: the Angstrom sign, the "ﬁ" ligature, "ṩ" (s with dot below
// and dot above) in both mark orders, and the Hangul syllable 가.
func TestNormalize(t *testing.T) {
	tests := []struct {
		in                   string
		nfc, nfd, nfkc, nfkd string
	}{
		{"\u212b", "\u00c5", "A\u030a", "\u00c5", "A\u030a"},                    // Å (Angstrom sign)
		{"\ufb01", "\ufb01", "\ufb01", "fi", "fi"},                              // ﬁ ligature
		{"s\u0323\u0307", "\u1e69", "s\u0323\u0307", "\u1e69", "s\u0323\u0307"}, // ṩ
		{"s\u0307\u0323", "\u1e69", "s\u0323\u0307", "\u1e69", "s\u0323\u0307"}, // ṩ, marks reordered
		{"\uac00", "\uac00", "\u1100\u1161", "\uac00", "\u1100\u1161"},          // 가
		{"\u2460 x\u00b2", "\u2460 x\u00b2", "\u2460 x\u00b2", "1 x2", "1 x2"},  // ① x²
		{"", "", "", "", ""},
	}
	for _, tt := range tests {
		for form, want := range map[string]string{"nfc": tt.nfc, "nfd": tt.nfd, "nfkc": tt.nfkc, "nfkd": tt.nfkd} {
			got, err := Normalize(tt.in, form)
			if err != nil || got != want {
				t.Errorf("Normalize(%+q, %s) = %+q, %v; want %+q", tt.in, form, got, err, want)
			}
			if ok, _ := IsNormal(want, form); !ok {
				t.Errorf("IsNormal(%+q, %s) = false", want, form)
			}
		}
	}
	if ok, _ := IsNormal("A\u030a", "nfc"); ok {
		t.Error("IsNormal(A + ring, nfc) = true")
	}
	if _, err := Normalize("x", "nfx"); !errors.Is(err, ErrForm) {
		t.Errorf("Normalize(nfx): %v", err)
	}
	if _, err := IsNormal("x", "NFC"); !errors.Is(err, ErrForm) {
		t.Errorf("IsNormal(NFC): %v", err)
	}
}
