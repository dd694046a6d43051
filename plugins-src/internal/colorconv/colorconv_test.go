package colorconv

import (
	"errors"
	"testing"
)

// Reference values: CSS Color 4's named-colour table (the sRGB and HSL
// columns) and colorjs.io (the CSS Color 4 editors' library) for OKLCh —
// red oklch(62.796% 0.25768 29.234), green (#008000) oklch(51.975% 0.17686
// 142.495), blue oklch(45.201% 0.31321 264.052); the other OKLCh values
// were computed independently with CSS Color 4's sample code
// (conversions.js: lin_sRGB → XYZ D65 → OKLab matrices), which reaches
// OKLab by another path than this package's Ottosson matrices, and the HSL
// ones with Python's colorsys.
func TestConvert(t *testing.T) {
	tests := []struct {
		in   string
		want Result
	}{
		{"#ff0000", Result{"#ff0000", "rgb(255 0 0)", "hsl(0 100% 50%)", "oklch(62.8% 0.2577 29.23)", true}},
		{"#F00", Result{"#ff0000", "rgb(255 0 0)", "hsl(0 100% 50%)", "oklch(62.8% 0.2577 29.23)", true}},
		{"hsl(120deg 100% 25%)", Result{"#008000", "rgb(0 128 0)", "hsl(120 100% 25%)", "oklch(51.83% 0.1764 142.5)", true}},
		{"#008000", Result{"#008000", "rgb(0 128 0)", "hsl(120 100% 25.1%)", "oklch(51.98% 0.1769 142.5)", true}},
		{"rgb(0, 0, 255)", Result{"#0000ff", "rgb(0 0 255)", "hsl(240 100% 50%)", "oklch(45.2% 0.3132 264.05)", true}},
		{"#ffffff", Result{"#ffffff", "rgb(255 255 255)", "hsl(0 0% 100%)", "oklch(100% 0 0)", true}},
		{"000", Result{"#000000", "rgb(0 0 0)", "hsl(0 0% 0%)", "oklch(0% 0 0)", true}},
		{"rgba(255 0 0 / 50%)", Result{"#ff000080", "rgb(255 0 0 / 0.5)", "hsl(0 100% 50% / 0.5)", "oklch(62.8% 0.2577 29.23 / 0.5)", true}},
		{"#7fffd480", Result{"#7fffd480", "rgb(127 255 212 / 0.502)", "hsl(159.84 100% 74.9% / 0.502)", "oklch(91.5% 0.1304 168.99 / 0.502)", true}},
		{"oklch(62.8% 0.2577 29.23)", Result{"#ff0000", "rgb(255 0 0)", "hsl(359.98 100% 50%)", "oklch(62.8% 0.2577 29.23)", true}},
		{"oklch(0.7 0.4 150)", Result{"#00d600", "rgb(0 214 0)", "hsl(120 100% 41.93%)", "oklch(70% 0.4 150)", false}},
		{"hsl(-120, 50%, 50%)", Result{"#4040bf", "rgb(64 64 191)", "hsl(240 50% 50%)", "oklch(45.62% 0.1936 275.53)", true}},
		{"rgb(300 -5 50%)", Result{"#ff0080", "rgb(255 0 128)", "hsl(330 100% 50%)", "oklch(64.52% 0.2602 2.63)", true}},
	}
	for _, tt := range tests {
		if got, err := Convert(tt.in); err != nil || got != tt.want {
			t.Errorf("Convert(%q) =\n%+v, %v, want\n%+v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "red", "#gg0000", "rgb(1 2)", "rgb(1, 2 3)", "rgb(1 2 3 /)", "hsl(10% 50% 50%)", "cmyk(0 0 0 0)", "rgb(nan 0 0)", "rgb(1e9 0 0)", "oklch(0.5 0.1)", "rgb(1 2 3 / 0.5 / 1)"} {
		if _, err := Convert(bad); !errors.Is(err, ErrColor) {
			t.Errorf("Convert(%q): %v", bad, err)
		}
	}
}

// FuzzConvert: no text makes Convert panic, and a result's hex reads back
// as the same hex.
func FuzzConvert(f *testing.F) {
	for _, s := range []string{"#ff0000", "rgb(1 2 3 / 50%)", "hsla(10, 20%, 30%, 0.4)", "oklch(0.7 0.4 150)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Convert(s)
		if err != nil {
			return
		}
		back, err := Convert(r.Hex)
		if err != nil || back.Hex != r.Hex {
			t.Errorf("%q: hex %s reads back as %s, %v", s, r.Hex, back.Hex, err)
		}
	})
}
