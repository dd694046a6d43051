package main

import (
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/bundledtest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
)

func load(t *testing.T) *bundledtest.Tools {
	t.Helper()
	return bundledtest.Load(t, "case", "slug")
}

func TestDeclaration(t *testing.T) {
	tools := load(t)
	if got := tools.MaxLength("case", "convert", "text"); got != bundled.MaxTextLength {
		t.Errorf("case text maxLength = %d", got)
	}
	if got := tools.MaxLength("slug", "slugify", "text"); got != bundled.MaxTextLength {
		t.Errorf("slug text maxLength = %d", got)
	}
}

func TestCase(t *testing.T) {
	tools := load(t)
	tests := []struct {
		to, text, want string
	}{
		{"upper", "Héllo wörld 😀", "HÉLLO WÖRLD 😀"},
		{"lower", "HÉLLO 中文", "héllo 中文"},
		{"title", "the quick BROWN fox", "The Quick Brown Fox"},
		{"sentence", "HELLO THERE. how are you?", "Hello there. How are you?"},
		{"camel", "XML http request", "xmlHttpRequest"},
		{"pascal", "user_id", "UserId"},
		{"snake", "helloWorld 2024", "hello_world_2024"},
		{"kebab", "Héllo Wörld", "héllo-wörld"},
		{"constant", "max retries", "MAX_RETRIES"},
		{"snake", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.to, func(t *testing.T) {
			params := `{"operation":"convert","text":"` + tt.text + `","to":"` + tt.to + `"}`
			if got := tools.Text(t, "case", params); got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
		})
	}
	tools.Refused(t, "case", `{"operation":"convert","text":"x","to":"spongebob"}`)
	tools.Refused(t, "case", `{"operation":"convert","text":"x"}`)
}

func TestSlug(t *testing.T) {
	tools := load(t)
	tests := []struct {
		name, params, want string
	}{
		{"default", `{"operation":"slugify","text":"Héllo Wörld!"}`, "hello-world"},
		{"separator", `{"operation":"slugify","text":"Héllo Wörld!","separator":"_"}`, "hello_world"},
		{"cjk", `{"operation":"slugify","text":"中文 Title"}`, "zhong-wen-title"},
		{"empty", `{"operation":"slugify","text":""}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tools.Text(t, "slug", tt.params); got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
		})
	}
	tools.Refused(t, "slug", `{"operation":"slugify","text":"x","separator":" "}`)
	tools.Refused(t, "slug", `{"operation":"slugify","text":"x","separator":""}`)
	tools.Refused(t, "slug", `{"operation":"slugify","text":"x","separator":"/"}`)
	tools.Refused(t, "slug", `{"operation":"slugify","text":"x","separator":"123456789"}`)
}

// TestWASM runs items natively and in the built module: the same bytes.
func TestWASM(t *testing.T) {
	tools := load(t)
	mod := bundledtest.Module(t, "text")
	long := strings.Repeat("Héllo wörld XMLHttpRequest Привет 中文 😀 ", 1500)
	for _, to := range []string{"upper", "lower", "title", "sentence", "camel", "pascal", "snake", "kebab", "constant"} {
		tools.Same(t, mod, "case", `{"operation":"convert","to":"`+to+`","text":"ΟΔΟΣ straße XMLHttpRequest don't stop. 2fast 😀"}`)
		tools.Same(t, mod, "case", `{"operation":"convert","to":"`+to+`","text":"`+long+`"}`)
	}
	for _, params := range []string{
		`{"operation":"slugify","text":"Héllo Wörld!"}`,
		`{"operation":"slugify","text":"Привет мир 中文 & Co @ home","separator":"_"}`,
		`{"operation":"slugify","text":"` + long + `"}`,
	} {
		tools.Same(t, mod, "slug", params)
	}
}

func TestDocs(t *testing.T) {
	tools := load(t)
	for _, code := range []string{"case", "slug"} {
		tools.CheckDocs(t, "../../docs/tools/"+code+".md", code)
	}
}
