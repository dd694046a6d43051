package main

import (
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/bundledtest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
)

func load(t *testing.T) *bundledtest.Tools {
	t.Helper()
	return bundledtest.Load(t, "json", "minify", "beautify")
}

func TestDeclaration(t *testing.T) {
	tools := load(t)
	for code, ops := range map[string][]string{
		"json":     {"format", "minify", "validate"},
		"minify":   {"html", "css", "js", "svg", "xml"},
		"beautify": {"json", "html", "css"},
	} {
		for _, op := range ops {
			if got := tools.MaxLength(code, op, "text"); got != bundled.MaxTextLength {
				t.Errorf("%s/%s text maxLength = %d, want %d", code, op, got, bundled.MaxTextLength)
			}
		}
	}
}

func TestJSON(t *testing.T) {
	tools := load(t)
	tests := []struct {
		name   string
		params string
		want   string
	}{
		{name: "format default indent", params: `{"operation":"format","text":"{\"b\":1,\"a\":[true]}"}`,
			want: "{\n  \"b\": 1,\n  \"a\": [\n    true\n  ]\n}"},
		{name: "format indent 4 sorted", params: `{"operation":"format","text":"{\"b\":1,\"a\":2}","indent":4,"sort_keys":true}`,
			want: "{\n    \"a\": 2,\n    \"b\": 1\n}"},
		{name: "format indent 0", params: `{"operation":"format","text":" [ 1 , 2 ] ","indent":0}`, want: "[1,2]"},
		{name: "format unicode", params: `{"operation":"format","text":"{\"é\":\"😀中\"}"}`, want: "{\n  \"é\": \"😀中\"\n}"},
		{name: "minify", params: `{"operation":"minify","text":"{\n  \"a\": [1, 2]\n}"}`, want: `{"a":[1,2]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tools.Text(t, "json", tt.params); got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestJSONValidate(t *testing.T) {
	tools := load(t)
	m, err := tools.Run(t, "json", `{"operation":"validate","text":"{\"a\":1}"}`)
	if err != nil || m["valid"] != true || len(m) != 1 {
		t.Errorf("valid: %v, %v", m, err)
	}
	m, err = tools.Run(t, "json", `{"operation":"validate","text":"{\n  \"a\" 1\n}"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"valid": false, "position": 8.0, "line": 2.0, "column": 7.0, "reason": "expected ':' after object key"}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	m, err = tools.Run(t, "json", `{"operation":"validate","text":""}`)
	if err != nil || m["valid"] != false || m["reason"] != "empty input" {
		t.Errorf("empty: %v, %v", m, err)
	}
}

func TestJSONFaults(t *testing.T) {
	tools := load(t)
	msg := tools.ToolError(t, "json", `{"operation":"format","text":"{\"secret\" 1}"}`)
	if want := "text is not valid JSON: expected ':' after object key at line 1, column 11 (byte 10)"; msg != want {
		t.Errorf("message = %q, want %q", msg, want)
	}
	tools.ToolError(t, "json", `{"operation":"minify","text":"[1,]"}`)
	deep := strings.Repeat("[", 1000) + strings.Repeat("]", 1000)
	msg = tools.ToolError(t, "json", `{"operation":"format","indent":8,"text":"`+deep+`"}`)
	if !strings.Contains(msg, "256 KiB") {
		t.Errorf("too large: %q", msg)
	}
	tools.Refused(t, "json", `{"operation":"format","text":"{}","indent":9}`)
	tools.Refused(t, "json", `{"operation":"format","text":"{}","indent":-1}`)
	tools.Refused(t, "json", `{"operation":"minify","text":"{}","indent":2}`)
	tools.Refused(t, "json", `{"operation":"validate","text":"{}","sort_keys":true}`)
	tools.Refused(t, "json", `{"operation":"format"}`)
	tools.Refused(t, "json", `{"operation":"format","text":"{}","extra":1}`)
	tools.Refused(t, "json", `{"operation":"pretty","text":"{}"}`)
}

func TestMinify(t *testing.T) {
	tools := load(t)
	tests := []struct {
		op, text, want string
	}{
		{"html", "<p>  Héllo   <b>😀</b> </p>\n<!-- c -->", "<p>Héllo <b>😀</b></p>"},
		{"css", "a { color : #ff0000 ; }", "a{color:red}"},
		{"js", "var answer = 40 + 2 ;\n", "var answer=40+2"},
		{"svg", "<svg xmlns=\"http://www.w3.org/2000/svg\">\n  <rect width=\"10.0\" height=\"10\"/>\n</svg>", "<svg xmlns=\"http://www.w3.org/2000/svg\"><rect width=\"10\" height=\"10\"/></svg>"},
		{"xml", "<a>\n  <b> x </b>\n</a>", "<a><b>x</b></a>"},
		{"html", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.op, func(t *testing.T) {
			params := `{"operation":"` + tt.op + `","text":` + quote(tt.text) + `}`
			if got := tools.Text(t, "minify", params); got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
		})
	}
	msg := tools.ToolError(t, "minify", `{"operation":"js","text":"let secret = 1;\nlet secret = 2;"}`)
	if want := "text is not valid JavaScript: identifier declared twice at line 2, column 5 (byte 20)"; msg != want {
		t.Errorf("message = %q, want %q", msg, want)
	}
	tools.ToolError(t, "minify", `{"operation":"xml","text":"<a><b></a>"}`)
	tools.Refused(t, "minify", `{"operation":"json","text":"{}"}`)
}

func TestBeautify(t *testing.T) {
	tools := load(t)
	tests := []struct {
		name, params, want string
	}{
		{"json", `{"operation":"json","text":"{\"b\":[1],\"a\":null}","sort_keys":true}`, "{\n  \"a\": null,\n  \"b\": [\n    1\n  ]\n}"},
		{"html", `{"operation":"html","text":"<div><p>Hi <b>there</b></p><pre> a\n  b</pre></div>"}`, "<div>\n  <p>Hi <b>there</b></p>\n  <pre> a\n  b</pre>\n</div>"},
		{"html indent 4", `{"operation":"html","indent":4,"text":"<ul><li>é</li></ul>"}`, "<ul>\n    <li>é</li>\n</ul>"},
		{"css", `{"operation":"css","text":"a{color:red;margin:0}"}`, "a {\n  color: red;\n  margin: 0\n}"},
		{"empty", `{"operation":"css","text":""}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tools.Text(t, "beautify", tt.params); got != tt.want {
				t.Errorf("text =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
	tools.ToolError(t, "beautify", `{"operation":"json","text":"{"}`)
	tools.Refused(t, "beautify", `{"operation":"html","text":"<p>","sort_keys":true}`)
	tools.Refused(t, "beautify", `{"operation":"css","text":"a{}","indent":100}`)
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TestWASM runs items natively and in the built module: the same bytes.
func TestWASM(t *testing.T) {
	tools := load(t)
	mod := bundledtest.Module(t, "markup")
	big := "[" + strings.Repeat(`{"id":1,"name":"élément 😀","tags":["a","b"]},`, 1800) + `{}]`
	page := strings.Repeat(`<div class="card"><h2>Title <small>sub</small></h2><p>Some <a href="#">linked</a> text.</p><pre> a
  b</pre><script>var a = 1 < 2;</script></div>`, 200)
	for _, params := range []string{
		`{"operation":"format","text":"{\"b\":1,\"a\":[true,\"é😀中\"]}","indent":4,"sort_keys":true}`,
		`{"operation":"minify","text":"{ \"a\" : [ 1 , 2 ] }"}`,
		`{"operation":"validate","text":"{\"a\":1}"}`,
		`{"operation":"validate","text":"{\n  \"a\" 1\n}"}`,
		`{"operation":"format","text":"[1,]"}`,
		`{"operation":"format","sort_keys":true,"text":` + quote(big) + `}`,
	} {
		tools.Same(t, mod, "json", params)
	}
	for _, params := range []string{
		`{"operation":"html","text":` + quote(page) + `}`,
		`{"operation":"css","text":"a { color : #ff0000 ; }"}`,
		`{"operation":"js","text":"function f ( a ) { return a + 1 ; }"}`,
		`{"operation":"js","text":"let x = 1; let x = 2;"}`,
		`{"operation":"svg","text":"<svg><rect width=\"10.0\"/></svg>"}`,
		`{"operation":"xml","text":"<a><b></a>"}`,
	} {
		tools.Same(t, mod, "minify", params)
	}
	for _, params := range []string{
		`{"operation":"html","text":` + quote(page) + `}`,
		`{"operation":"css","indent":4,"text":"@media screen{a{color:red}}"}`,
		`{"operation":"json","indent":0,"text":"{ \"a\" : 1 }"}`,
		`{"operation":"json","text":"{"}`,
	} {
		tools.Same(t, mod, "beautify", params)
	}
}

func TestDocs(t *testing.T) {
	tools := load(t)
	for _, code := range []string{"json", "minify", "beautify"} {
		tools.CheckDocs(t, "../../docs/tools/"+code+".md", code)
	}
}
