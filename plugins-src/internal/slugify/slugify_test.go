package slugify

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gosimple/slug"
)

func TestMake(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		separator string
		want      string
	}{
		{name: "example", text: "Héllo Wörld!", separator: "-", want: "hello-world"},
		{name: "underscore separator", text: "Héllo Wörld!", separator: "_", want: "hello_world"},
		{name: "dot separator", text: "Release notes 2.0", separator: ".", want: "release.notes.2.0"},
		{name: "long separator", text: "a b", separator: "--", want: "a--b"},
		{name: "ampersand and at", text: "Tom & Jerry @ Home", separator: "-", want: "tom-and-jerry-at-home"},
		{name: "quotes vanish", text: "It's \"quoted\" — isn’t it?", separator: "-", want: "its-quoted-isnt-it"},
		{name: "sharp s and ligatures", text: "Straße Œuvre Æsir", separator: "-", want: "strasse-oeuvre-aesir"},
		{name: "combining marks", text: "Cafe\u0301 cre\u0300me", separator: "-", want: "cafe-creme"},
		{name: "underscores kept", text: "snake_case  name", separator: "-", want: "snake_case-name"},
		{name: "trimmed", text: "  --Hello--  ", separator: "-", want: "hello"},
		{name: "cjk through the library", text: "中文 标题", separator: "-", want: "zhong-wen-biao-ti"},
		{name: "greek through the library", text: "Ελληνικά", separator: "-", want: "ellenika"},
		{name: "cyrillic through the library", text: "Привет мир", separator: "-", want: "privet-mir"},
		{name: "emoji dropped", text: "I ❤ Go 😀", separator: "-", want: "i-go"},
		{name: "empty", text: "", separator: "-", want: ""},
		{name: "nothing left", text: " !?… ", separator: "-", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Make(tt.text, tt.separator)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Make(%q, %q) = %q, want %q", tt.text, tt.separator, got, tt.want)
			}
		})
	}
}

func TestSeparator(t *testing.T) {
	for _, sep := range []string{"", " ", "/", "é", "123456789", "a b"} {
		if _, err := Make("a b", sep); !errors.Is(err, ErrSeparator) {
			t.Errorf("Make with separator %q = %v, want ErrSeparator", sep, err)
		}
	}
}

// TestMatchesLibrary holds slugText to slug.Make: every code point up to
// U+FFFF between letters, a sample beyond, and random mixtures of scripts,
// marks, spaces, punctuation and the substituted characters.
func TestMatchesLibrary(t *testing.T) {
	check := func(text string) {
		t.Helper()
		if got, want := slugText(text), slug.Make(text); got != want {
			t.Errorf("slugText(%q) = %q, library %q", text, got, want)
		}
	}
	for r := rune(0); r <= 0xFFFF; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		check("Ab" + string(r) + "c")
	}
	for _, r := range []rune{0x10000, 0x1F600, 0x1F1EB, 0x20000, 0x10FFFF} {
		check("a" + string(r) + " b")
	}
	pool := []rune("aZ09 _-.&@'\"’–—\t\n\u00a0\u3000éÆßœŁ中文日本語한국어ПриветΕλληνικάعربيעברית\u0301\u0308😀❤☃…«»¿¡")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		var b strings.Builder
		for range 1 + rng.IntN(16) {
			b.WriteRune(pool[rng.IntN(len(pool))])
		}
		check(b.String())
	}
	check("\xff invalid \xc3 UTF-8")
}

func BenchmarkMake(b *testing.B) {
	text := strings.Repeat("Héllo Wörld — Crème brûlée & Co. Привет 中文 😀 ", 100)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Make(text, "-"); err != nil {
			b.Fatal(err)
		}
	}
}
