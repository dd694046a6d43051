package main

import (
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/bundledtest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
)

func load(t *testing.T) *bundledtest.Tools {
	t.Helper()
	return bundledtest.Load(t, "hash", "base64", "url")
}

func TestDeclaration(t *testing.T) {
	tools := load(t)
	for code, ops := range map[string][]string{"hash": {"digest"}, "base64": {"encode", "decode"}, "url": {"encode", "decode"}} {
		for _, op := range ops {
			if got := tools.MaxLength(code, op, "text"); got != bundled.MaxTextLength {
				t.Errorf("%s/%s text maxLength = %d", code, op, got)
			}
		}
	}
}

func TestHash(t *testing.T) {
	tools := load(t)
	tests := []struct {
		name, params, want string
	}{
		{"sha256 hex default", `{"operation":"digest","text":"abc","algorithm":"sha256"}`, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"md5 base64", `{"operation":"digest","text":"abc","algorithm":"md5","encoding":"base64"}`, "kAFQmDzST7DWlj99KOF/cg=="},
		{"sha1 unicode", `{"operation":"digest","text":"é😀中","algorithm":"sha256"}`, "fec0e4d258099829d5bffb1aaf8cc362a5f79a762115b6daf5cda91cea5dc6c8"},
		{"hmac", `{"operation":"digest","text":"what do ya want for nothing?","algorithm":"sha256","hmac_key":"Jefe"}`, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
		{"hmac empty key", `{"operation":"digest","text":"abc","algorithm":"sha256","hmac_key":""}`, "fd7adb152c05ef80dccf50a1fa4c05d5a3ec6da95575fc312ae7c5d091836351"},
		{"empty text", `{"operation":"digest","text":"","algorithm":"md5"}`, "d41d8cd98f00b204e9800998ecf8427e"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := tools.Run(t, "hash", tt.params)
			if err != nil {
				t.Fatal(err)
			}
			if m["digest"] != tt.want || len(m) != 1 {
				t.Errorf("result = %v, want digest %s", m, tt.want)
			}
		})
	}
	tools.Refused(t, "hash", `{"operation":"digest","text":"abc"}`)
	tools.Refused(t, "hash", `{"operation":"digest","text":"abc","algorithm":"crc32"}`)
	tools.Refused(t, "hash", `{"operation":"digest","text":"abc","algorithm":"md5","encoding":"base32"}`)
	tools.Refused(t, "hash", `{"operation":"digest","text":"abc","algorithm":"md5","hmac_key":"`+strings.Repeat("k", 1025)+`"}`)
}

func TestBase64(t *testing.T) {
	tools := load(t)
	tests := []struct {
		name, params, want string
	}{
		{"encode", `{"operation":"encode","text":"Héllo 😀"}`, "SMOpbGxvIPCfmIA="},
		{"encode url no padding", `{"operation":"encode","text":"\u00fb\u00ff?","alphabet":"url","padding":false}`, "w7vDvz8"},
		{"decode", `{"operation":"decode","text":"SMOpbGxvIPCfmIA="}`, "Héllo 😀"},
		{"decode wrapped", `{"operation":"decode","text":"SMOpbGxv\r\nIPCfmIA=\n"}`, "Héllo 😀"},
		{"decode url", `{"operation":"decode","text":"w7vDvz8","alphabet":"url","padding":false}`, "ûÿ?"},
		{"empty", `{"operation":"decode","text":""}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tools.Text(t, "base64", tt.params); got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
		})
	}
	for params, want := range map[string]string{
		`{"operation":"decode","text":"SMOpbGxv IPCfmIA="}`:                "text is not valid standard base64: white space is not allowed at line 1, column 9 (byte 8)",
		`{"operation":"decode","text":"SMOpbGxvIPCfmIA"}`:                  "text is not valid standard base64: missing '=' padding at the end at line 1, column 16 (byte 15)",
		`{"operation":"decode","text":"SMOpbGxvIPCfmIA=","padding":false}`: "text is not valid standard base64: '=' padding found, but padding is off at line 1, column 16 (byte 15)",
		`{"operation":"decode","text":"_w=="}`:                             "text is not valid standard base64: character of the url alphabet ('-' or '_') in standard base64 at line 1, column 1 (byte 0)",
		`{"operation":"decode","text":"/w=="}`:                             "decoded bytes are not UTF-8 text: first invalid byte at offset 0 of the decoded data (this tool returns text only)",
	} {
		if got := tools.ToolError(t, "base64", params); got != want {
			t.Errorf("%s: message %q, want %q", params, got, want)
		}
	}
	tools.Refused(t, "base64", `{"operation":"encode","text":"x","alphabet":"base32"}`)
}

func TestURL(t *testing.T) {
	tools := load(t)
	tests := []struct {
		name, params, want string
	}{
		{"encode query", `{"operation":"encode","text":"a b&c=é"}`, "a+b%26c%3D%C3%A9"},
		{"encode path", `{"operation":"encode","text":"a b/c+d","component":"path"}`, "a%20b%2Fc+d"},
		{"decode query", `{"operation":"decode","text":"a+b%26c%3D%C3%A9"}`, "a b&c=é"},
		{"decode path", `{"operation":"decode","text":"a+b%20%F0%9F%98%80","component":"path"}`, "a+b 😀"},
		{"empty", `{"operation":"encode","text":""}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tools.Text(t, "url", tt.params); got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
		})
	}
	if got, want := tools.ToolError(t, "url", `{"operation":"decode","text":"100%zz"}`),
		"text is not valid percent-encoding: '%' must be followed by two hex digits at line 1, column 4 (byte 3)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	tools.ToolError(t, "url", `{"operation":"decode","text":"%FF"}`)
	tools.Refused(t, "url", `{"operation":"encode","text":"x","component":"fragment"}`)
}

// TestWASM runs items natively and in the built module: the same bytes.
func TestWASM(t *testing.T) {
	tools := load(t)
	mod := bundledtest.Module(t, "codec")
	long := strings.Repeat("Héllo wörld & Привет 中文 😀 ", 2000)
	for _, params := range []string{
		`{"operation":"digest","text":"abc","algorithm":"md5"}`,
		`{"operation":"digest","text":"` + long + `","algorithm":"sha512","encoding":"base64","hmac_key":"clé"}`,
	} {
		tools.Same(t, mod, "hash", params)
	}
	for _, params := range []string{
		`{"operation":"encode","text":"` + long + `"}`,
		`{"operation":"encode","text":"é😀?","alphabet":"url","padding":false}`,
		`{"operation":"decode","text":"w6nwn5iAPw"}`,
		`{"operation":"decode","text":"w6nwn5iAPw","alphabet":"url","padding":false}`,
		`{"operation":"decode","text":"/w=="}`,
	} {
		tools.Same(t, mod, "base64", params)
	}
	for _, params := range []string{
		`{"operation":"encode","text":"` + long + `","component":"path"}`,
		`{"operation":"decode","text":"a+b%C3%A9"}`,
		`{"operation":"decode","text":"%zz"}`,
	} {
		tools.Same(t, mod, "url", params)
	}
}

func TestDocs(t *testing.T) {
	tools := load(t)
	for _, code := range []string{"hash", "base64", "url"} {
		tools.CheckDocs(t, "../../docs/tools/"+code+".md", code)
	}
}
