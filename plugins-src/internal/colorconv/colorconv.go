// Package colorconv converts CSS colours between hex, rgb(), hsl() and
// oklch() with the formulas of CSS Color Module Level 4
// (https://www.w3.org/TR/css-color-4/): §7.1's hslToRgb and rgbToHsl, §10.2's
// sRGB transfer function (sign-preserving), and OKLab (§9.2, Björn
// Ottosson's "A perceptual color space for image processing", 2020, whose
// linear-sRGB matrices this file uses) with its polar form OKLCh.
//
// Colours outside sRGB (an oklch() with a chroma sRGB cannot show) are
// clipped channel by channel for hex, rgb and hsl, and reported: CSS
// Color 4 §13's gamut mapping searches the chroma instead, which gives a
// different, closer colour; clipping is what most converters do, and the
// in_gamut flag says when it happened.
package colorconv

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// ErrColor is returned for text that is not a colour this package reads.
var ErrColor = errors.New("colorconv: not a CSS hex, rgb(), hsl() or oklch() colour")

// Color is a colour in gamma-encoded sRGB, channels nominally 0–1 (beyond
// for a colour outside sRGB), and alpha 0–1. ok holds the OKLCh it was
// given, when it was given as oklch().
type Color struct {
	R, G, B, A float64
	ok         *[3]float64
}

// Result is a colour written four ways.
type Result struct {
	Hex, RGB, HSL, OKLCH string
	// InGamut is false when the colour is outside sRGB and hex, rgb and hsl
	// are clipped; oklch is then the colour as given.
	InGamut bool
}

// Convert reads s and writes it in every format.
func Convert(s string) (Result, error) {
	c, err := Parse(s)
	if err != nil {
		return Result{}, err
	}
	return c.Format(), nil
}

// Parse reads a colour: #rgb, #rgba, #rrggbb, #rrggbbaa (the '#' may be
// left out); rgb()/rgba() with numbers 0–255 or percentages; hsl()/hsla()
// with a hue in degrees (a number, or with "deg") and percentages; oklch()
// with a lightness 0–1 or a percentage, a chroma (a number, or a
// percentage of 0.4) and a hue in degrees. Functions take the modern
// space-separated form with an optional "/ alpha" or the legacy
// comma-separated one; letters may be of either case. Out-of-range
// components are clamped as CSS clamps them (rgb channels to 0–255, hsl
// saturation and lightness to 0–100%, oklch lightness to 0–1 and chroma
// to at least 0, alpha to 0–1).
func Parse(s string) (Color, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if strings.HasPrefix(s, "#") || isHex(s) {
		return parseHex(strings.TrimPrefix(s, "#"))
	}
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return Color{}, ErrColor
	}
	name := strings.TrimSpace(s[:open])
	args, alpha, err := splitArgs(s[open+1 : len(s)-1])
	if err != nil {
		return Color{}, err
	}
	a := 1.0
	if alpha != "" {
		if a, err = number(alpha, 1); err != nil {
			return Color{}, err
		}
		a = clamp(a, 0, 1)
	}
	var v [3]float64
	switch name {
	case "rgb", "rgba":
		for i := range v {
			x, err := number(args[i], 255)
			if err != nil {
				return Color{}, err
			}
			v[i] = clamp(x, 0, 255) / 255
		}
		return Color{R: v[0], G: v[1], B: v[2], A: a}, nil
	case "hsl", "hsla":
		h, err := hue(args[0])
		if err != nil {
			return Color{}, err
		}
		sat, err1 := number(args[1], 100)
		light, err2 := number(args[2], 100)
		if err1 != nil || err2 != nil {
			return Color{}, ErrColor
		}
		r, g, b := hslToRGB(h, clamp(sat, 0, 100)/100, clamp(light, 0, 100)/100)
		return Color{R: r, G: g, B: b, A: a}, nil
	case "oklch":
		l, err1 := number(args[0], 1)
		c, err2 := number(args[1], 0.4)
		h, err3 := hue(args[2])
		if err1 != nil || err2 != nil || err3 != nil {
			return Color{}, ErrColor
		}
		ok := [3]float64{clamp(l, 0, 1), math.Max(c, 0), h}
		r, g, b := oklchToRGB(ok[0], ok[1], ok[2])
		return Color{R: r, G: g, B: b, A: a, ok: &ok}, nil
	}
	return Color{}, ErrColor
}

func isHex(s string) bool {
	switch len(s) {
	case 3, 4, 6, 8:
	default:
		return false
	}
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune("0123456789abcdef", rune(s[i])) {
			return false
		}
	}
	return true
}

func parseHex(h string) (Color, error) {
	if !isHex(h) {
		return Color{}, ErrColor
	}
	if len(h) <= 4 {
		var b strings.Builder
		for i := 0; i < len(h); i++ {
			b.WriteByte(h[i])
			b.WriteByte(h[i])
		}
		h = b.String()
	}
	if len(h) == 6 {
		h += "ff"
	}
	var v [4]float64
	for i := range v {
		n, _ := strconv.ParseUint(h[2*i:2*i+2], 16, 8)
		v[i] = float64(n) / 255
	}
	return Color{R: v[0], G: v[1], B: v[2], A: v[3]}, nil
}

// splitArgs splits a function's arguments: three components and an
// optional alpha, separated by commas (legacy) or by white space with the
// alpha after a '/'.
func splitArgs(body string) ([]string, string, error) {
	if strings.Contains(body, ",") {
		parts := strings.Split(body, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		switch len(parts) {
		case 3:
			return parts, "", nil
		case 4:
			return parts[:3], parts[3], nil
		}
		return nil, "", ErrColor
	}
	main, alpha, slash := strings.Cut(body, "/")
	parts := strings.Fields(main)
	alpha = strings.TrimSpace(alpha)
	if len(parts) != 3 || slash && alpha == "" || strings.ContainsAny(alpha, " \t/") {
		return nil, "", ErrColor
	}
	return parts, alpha, nil
}

// number reads a CSS number, or a percentage of full (100% = full). hsl's
// saturation and lightness pass full 100, so that a bare number is read as
// the percentage's value, as CSS Color 4's modern hsl() allows.
func number(s string, full float64) (float64, error) {
	pct := strings.HasSuffix(s, "%")
	s = strings.TrimSuffix(s, "%")
	if s == "" || strings.ContainsAny(s, "xXnNiI_") { // no hex, NaN, Inf or separators
		return 0, ErrColor
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(x, 0) || math.Abs(x) > 1e6 {
		return 0, ErrColor
	}
	if pct {
		return x / 100 * full, nil
	}
	return x, nil
}

// hue reads an angle in degrees ("120" or "120deg") and normalises it to
// [0, 360).
func hue(s string) (float64, error) {
	h, err := number(strings.TrimSuffix(s, "deg"), 1)
	if err != nil || strings.HasSuffix(s, "%") {
		return 0, ErrColor
	}
	h = math.Mod(h, 360)
	if h < 0 {
		h += 360
	}
	return h, nil
}

func clamp(x, lo, hi float64) float64 { return math.Min(math.Max(x, lo), hi) }

// hslToRGB is CSS Color 4 §7.1's hslToRgb, s and l in 0–1.
func hslToRGB(h, s, l float64) (float64, float64, float64) {
	f := func(n float64) float64 {
		k := math.Mod(n+h/30, 12)
		a := s * math.Min(l, 1-l)
		return l - a*math.Max(-1, math.Min(math.Min(k-3, 9-k), 1))
	}
	return f(0), f(8), f(4)
}

// rgbToHSL is CSS Color 4 §7.1's rgbToHsl for channels in 0–1; an
// achromatic colour has hue 0.
func rgbToHSL(r, g, b float64) (h, s, l float64) {
	hi, lo := math.Max(r, math.Max(g, b)), math.Min(r, math.Min(g, b))
	l = (hi + lo) / 2
	d := hi - lo
	if d == 0 {
		return 0, 0, l
	}
	if l != 0 && l != 1 {
		s = (hi - l) / math.Min(l, 1-l)
	}
	switch hi {
	case r:
		h = (g - b) / d
		if g < b {
			h += 6
		}
	case g:
		h = (b-r)/d + 2
	default:
		h = (r-g)/d + 4
	}
	return h * 60, s, l
}

// toLinear and toGamma are the sRGB transfer function and its inverse
// (CSS Color 4 §10.2, lin_sRGB and gam_sRGB), extended to negative values
// by symmetry.
func toLinear(c float64) float64 {
	a := math.Abs(c)
	if a <= 0.04045 {
		return c / 12.92
	}
	return math.Copysign(math.Pow((a+0.055)/1.055, 2.4), c)
}

func toGamma(c float64) float64 {
	a := math.Abs(c)
	if a > 0.0031308 {
		return math.Copysign(1.055*math.Pow(a, 1/2.4)-0.055, c)
	}
	return 12.92 * c
}

// rgbToOKLCh converts gamma-encoded sRGB to OKLCh (lightness 0–1, chroma,
// hue in degrees [0, 360)).
func rgbToOKLCh(r, g, b float64) (float64, float64, float64) {
	r, g, b = toLinear(r), toLinear(g), toLinear(b)
	l := math.Cbrt(0.4122214708*r + 0.5363325363*g + 0.0514459929*b)
	m := math.Cbrt(0.2119034982*r + 0.6806995451*g + 0.1073969566*b)
	s := math.Cbrt(0.0883024619*r + 0.2817188376*g + 0.6299787005*b)
	L := 0.2104542553*l + 0.7936177850*m - 0.0040720468*s
	A := 1.9779984951*l - 2.4285922050*m + 0.4505937099*s
	B := 0.0259040371*l + 0.7827717662*m - 0.8086757660*s
	h := math.Atan2(B, A) * 180 / math.Pi
	if h < 0 {
		h += 360
	}
	return L, math.Hypot(A, B), h
}

// oklchToRGB converts OKLCh to gamma-encoded sRGB, unclipped.
func oklchToRGB(L, C, H float64) (float64, float64, float64) {
	A, B := C*math.Cos(H*math.Pi/180), C*math.Sin(H*math.Pi/180)
	l := L + 0.3963377774*A + 0.2158037573*B
	m := L - 0.1055613458*A - 0.0638541728*B
	s := L - 0.0894841775*A - 1.2914855480*B
	l, m, s = l*l*l, m*m*m, s*s*s
	r := 4.0767416621*l - 3.3077115913*m + 0.2309699292*s
	g := -1.2684380046*l + 2.6097574011*m - 0.3413193965*s
	b := -0.0041960863*l - 0.7034186147*m + 1.7076147010*s
	return toGamma(r), toGamma(g), toGamma(b)
}

// gamutEpsilon is how far outside 0–1 a channel may be and still count as
// in sRGB: half a step of an 8-bit channel, so that a colour whose oklch()
// was rounded to the digits Format writes (red is oklch(62.8% 0.2577
// 29.23), a hair outside sRGB) still counts as in it.
const gamutEpsilon = 0.5 / 255

// Format writes c as hex, rgb(), hsl() and oklch().
func (c Color) Format() Result {
	in := true
	ch := [3]float64{c.R, c.G, c.B}
	for i, x := range ch {
		if x < -gamutEpsilon || x > 1+gamutEpsilon {
			in = false
		}
		ch[i] = clamp(x, 0, 1)
	}
	var ok [3]float64
	if c.ok != nil {
		ok = *c.ok
	} else {
		ok[0], ok[1], ok[2] = rgbToOKLCh(ch[0], ch[1], ch[2])
	}
	alpha := ""
	if c.A < 1 {
		alpha = " / " + decimal(c.A, 3)
	}
	var hex strings.Builder
	hex.WriteByte('#')
	byteHex := func(x float64) {
		n := int(math.Round(x * 255))
		hex.WriteByte("0123456789abcdef"[n>>4])
		hex.WriteByte("0123456789abcdef"[n&15])
	}
	for _, x := range ch {
		byteHex(x)
	}
	if c.A < 1 {
		byteHex(c.A)
	}
	rgb := "rgb(" + decimal(ch[0]*255, 0) + " " + decimal(ch[1]*255, 0) + " " + decimal(ch[2]*255, 0) + alpha + ")"
	h, s, l := rgbToHSL(ch[0], ch[1], ch[2])
	hsl := "hsl(" + decimal(h, 2) + " " + decimal(s*100, 2) + "% " + decimal(l*100, 2) + "%" + alpha + ")"
	okH := decimal(ok[2], 2)
	okC := decimal(ok[1], 4)
	if okC == "0" || okH == "360" {
		okH = "0"
	}
	oklch := "oklch(" + decimal(ok[0]*100, 2) + "% " + okC + " " + okH + alpha + ")"
	return Result{Hex: hex.String(), RGB: rgb, HSL: hsl, OKLCH: oklch, InGamut: in}
}

// decimal writes x rounded to places decimals, without trailing zeros
// ("29.23", "0.5", "100"); -0 is "0".
func decimal(x float64, places int) string {
	p := math.Pow10(places)
	r := math.Round(x*p) / p
	if r == 0 {
		return "0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}
