package percent

import (
	"errors"
	"net/url"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

func TestEncode(t *testing.T) {
	tests := []struct {
		name string
		text string
		c    Component
		want string
	}{
		{name: "query", text: "a b&c=d/e?f#g+h", c: Query, want: "a+b%26c%3Dd%2Fe%3Ff%23g%2Bh"},
		{name: "path", text: "a b&c=d/e?f#g+h", c: Path, want: "a%20b&c=d%2Fe%3Ff%23g+h"},
		{name: "unreserved kept", text: "AZaz09-_.~", c: Query, want: "AZaz09-_.~"},
		{name: "percent sign", text: "100%", c: Path, want: "100%25"},
		{name: "unicode query", text: "é😀中", c: Query, want: "%C3%A9%F0%9F%98%80%E4%B8%AD"},
		{name: "unicode path", text: "Héllo Wörld", c: Path, want: "H%C3%A9llo%20W%C3%B6rld"},
		{name: "empty", text: "", c: Query, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Encode(tt.text, tt.c)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Encode = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		text string
		c    Component
		want string
	}{
		{name: "query plus is space", text: "a+b%20c", c: Query, want: "a b c"},
		{name: "path plus stays", text: "a+b%20c", c: Path, want: "a+b c"},
		{name: "lower-case hex", text: "%c3%a9", c: Query, want: "é"},
		{name: "unicode", text: "%F0%9F%98%80%E4%B8%AD", c: Path, want: "😀中"},
		{name: "raw unicode accepted", text: "é%20中", c: Query, want: "é 中"},
		{name: "unescaped reserved accepted", text: "a/b?c=d", c: Query, want: "a/b?c=d"},
		{name: "empty", text: "", c: Query, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode(tt.text, tt.c)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Decode = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDecodeFaults(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		offset int
		reason string
	}{
		{name: "bad hex", text: "ab%zz", offset: 2, reason: "'%' must be followed by two hex digits"},
		{name: "truncated", text: "abc%4", offset: 3, reason: "'%' must be followed by two hex digits"},
		{name: "lone percent", text: "100%", offset: 3, reason: "'%' must be followed by two hex digits"},
		{name: "not utf-8", text: "ok%20%FF%41", offset: 5, reason: "escaped bytes are not UTF-8 text"},
		{name: "truncated utf-8", text: "é%C3", offset: 2, reason: "escaped bytes are not UTF-8 text"},
		{name: "position after unicode", text: "中文%G1", offset: 6, reason: "'%' must be followed by two hex digits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.text, Query)
			var pe *textpos.Error
			if !errors.As(err, &pe) {
				t.Fatalf("Decode = %v, want a *textpos.Error", err)
			}
			if pe.Position.Offset != tt.offset || pe.Reason != tt.reason {
				t.Errorf("got %d %q, want %d %q", pe.Position.Offset, pe.Reason, tt.offset, tt.reason)
			}
		})
	}
}

// TestAgreesWithNetURL holds Encode and Decode to net/url.
func TestAgreesWithNetURL(t *testing.T) {
	var all []byte
	for c := 0; c < 128; c++ {
		all = append(all, byte(c))
	}
	texts := []string{string(all), "é😀中 x+y", "a/b;c,d?e"}
	for _, text := range texts {
		if got, _ := Encode(text, Query); got != url.QueryEscape(text) {
			t.Errorf("Encode query %q = %q, net/url %q", text, got, url.QueryEscape(text))
		}
		q, _ := Encode(text, Query)
		if got, err := Decode(q, Query); err != nil || got != text {
			t.Errorf("query round trip of %q = %q, %v", text, got, err)
		}
		p, _ := Encode(text, Path)
		if p != url.PathEscape(text) {
			t.Errorf("Encode path %q = %q, net/url %q", text, p, url.PathEscape(text))
		}
		if got, err := url.PathUnescape(p); err != nil || got != text {
			t.Errorf("net/url path unescape of %q = %q, %v", p, got, err)
		}
		if got, err := Decode(p, Path); err != nil || got != text {
			t.Errorf("path round trip of %q = %q, %v", text, got, err)
		}
	}
}

func TestUnknownComponent(t *testing.T) {
	if _, err := Encode("x", "fragment"); !errors.Is(err, ErrComponent) {
		t.Errorf("Encode: %v", err)
	}
	if _, err := Decode("x", "fragment"); !errors.Is(err, ErrComponent) {
		t.Errorf("Decode: %v", err)
	}
}
