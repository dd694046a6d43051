package textcase

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestConvert(t *testing.T) {
	tests := []struct {
		name string
		text string
		to   Case
		want string
	}{
		{name: "upper", text: "Hello, wörld! 😀", to: Upper, want: "HELLO, WÖRLD! 😀"},
		{name: "upper sharp s", text: "straße", to: Upper, want: "STRASSE"},
		{name: "lower", text: "HÉLLO World 中文", to: Lower, want: "héllo world 中文"},
		{name: "lower final sigma", text: "ΟΔΟΣ ΣΟΦΟΣ.", to: Lower, want: "οδος σοφος."},
		{name: "title", text: "hello wORLD, it's a new-day", to: Title, want: "Hello World, It's A New-Day"},
		{name: "title unicode", text: "élan vital ǆungla 😀 ok", to: Title, want: "Élan Vital ǅungla 😀 Ok"},
		{name: "title keeps spacing", text: "  two  spaces\nnew line", to: Title, want: "  Two  Spaces\nNew Line"},
		{name: "sentence", text: "hello WORLD. how are you? fine!thanks", to: Sentence, want: "Hello world. How are you? Fine!thanks"},
		{name: "sentence leading quote", text: "\"HI THERE.\" she said", to: Sentence, want: "\"Hi there.\" she said"},
		{name: "sentence cjk", text: "你好。 hello", to: Sentence, want: "你好。 Hello"},
		{name: "camel", text: "Hello world, foo_bar-baz", to: Camel, want: "helloWorldFooBarBaz"},
		{name: "camel from pascal", text: "XMLHttpRequest", to: Camel, want: "xmlHttpRequest"},
		{name: "pascal", text: "hello world", to: Pascal, want: "HelloWorld"},
		{name: "pascal from snake", text: "user_id_2fa", to: Pascal, want: "UserId2Fa"},
		{name: "snake", text: "helloWorld FooBar", to: Snake, want: "hello_world_foo_bar"},
		{name: "snake digits", text: "base64Encode v2", to: Snake, want: "base_64_encode_v_2"},
		{name: "snake apostrophe", text: "Don't stop", to: Snake, want: "dont_stop"},
		{name: "snake unicode", text: "Héllo Wörld Éclair", to: Snake, want: "héllo_wörld_éclair"},
		{name: "snake emoji dropped", text: "hello 😀 world", to: Snake, want: "hello_world"},
		{name: "snake cjk", text: "你好 世界", to: Snake, want: "你好_世界"},
		{name: "kebab", text: "  Hello,   World!  ", to: Kebab, want: "hello-world"},
		{name: "kebab from constant", text: "MAX_VALUE", to: Kebab, want: "max-value"},
		{name: "constant", text: "helloWorld straße", to: Constant, want: "HELLO_WORLD_STRASSE"},
		{name: "combining mark stays with its letter", text: "cafe\u0301Bar", to: Snake, want: "cafe\u0301_bar"},
		{name: "empty upper", text: "", to: Upper, want: ""},
		{name: "empty camel", text: "", to: Camel, want: ""},
		{name: "no words", text: " -_ !? ", to: Snake, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Convert(tt.text, tt.to)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Convert(%q, %s) = %q, want %q", tt.text, tt.to, got, tt.want)
			}
		})
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"helloWorld", []string{"hello", "World"}},
		{"XMLHttpRequest", []string{"XML", "Http", "Request"}},
		{"getHTTPResponseCode", []string{"get", "HTTP", "Response", "Code"}},
		{"ABC", []string{"ABC"}},
		{"version2Update", []string{"version", "2", "Update"}},
		{"snake_case-and kebab.dot/slash", []string{"snake", "case", "and", "kebab", "dot", "slash"}},
		{"ÉcoleNormale", []string{"École", "Normale"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := words(tt.text); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("words(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestUnknownCase(t *testing.T) {
	if _, err := Convert("x", "spongebob"); !errors.Is(err, ErrCase) {
		t.Errorf("err = %v, want ErrCase", err)
	}
}

func BenchmarkConvertSnake(b *testing.B) {
	text := strings.Repeat("Héllo wörld XMLHttpRequest snake_case 😀 ", 2500)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Convert(text, Snake); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConvertUpper(b *testing.B) {
	text := strings.Repeat("Héllo wörld XMLHttpRequest snake_case 😀 ", 2500)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Convert(text, Upper); err != nil {
			b.Fatal(err)
		}
	}
}

// words splits text into the words the identifier cases join, apostrophes
// inside words dropped: what eachWord gives join.
func words(text string) []string {
	var words []string
	eachWord(text, func(start, end int) {
		words = append(words, strings.Map(func(r rune) rune {
			if isApostrophe(r) {
				return -1
			}
			return r
		}, text[start:end]))
	})
	return words
}
