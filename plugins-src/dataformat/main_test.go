package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/bundledtest"
	"github.com/toolhost/toolhost/internal/wasmtool"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
)

var codes = []string{"yaml_json", "toml_json", "csv_json", "query_string", "xml", "json_diff", "json_query"}

func load(t *testing.T) *bundledtest.Tools {
	t.Helper()
	return bundledtest.Load(t, codes...)
}

// canonical encodes a decoded result with sorted keys and no HTML escapes.
func canonical(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func TestDeclaration(t *testing.T) {
	tools := load(t)
	for code, ops := range map[string][]string{
		"csv_json":     {"csv_to_json", "json_to_csv"},
		"yaml_json":    {"yaml_to_json", "json_to_yaml"},
		"toml_json":    {"toml_to_json", "json_to_toml"},
		"query_string": {"parse"},
		"xml":          {"format", "minify"},
		"json_query":   {"query"},
	} {
		for _, op := range ops {
			if got := tools.MaxLength(code, op, "text"); got != bundled.MaxTextLength {
				t.Errorf("%s/%s text maxLength = %d", code, op, got)
			}
		}
	}
}

func TestYAML(t *testing.T) {
	tools := load(t)
	tests := []struct{ name, params, want string }{
		{"yaml_to_json", `{"operation":"yaml_to_json","text":"name: Zoë\nage: 7\ntags: [a, b]\nbase: &b {x: 1}\nc:\n  <<: *b\n  y: 2\n","indent":0}`, `{"name":"Zoë","age":7,"tags":["a","b"],"base":{"x":1},"c":{"y":2,"x":1}}`},
		{"yaml_to_json all documents", `{"operation":"yaml_to_json","text":"a: 1\n---\n- 2\n","all_documents":true,"indent":0}`, `[{"a":1},[2]]`},
		{"json_to_yaml", `{"operation":"json_to_yaml","text":"{\"name\":\"Zoë\",\"on\":true,\"list\":[{\"a\":\"yes\"},[]]}"}`, "name: Zoë\n\"on\": true\nlist:\n  - a: \"yes\"\n  - []\n"},
		{"json_to_yaml indent 4", `{"operation":"json_to_yaml","text":"{\"a\":{\"b\":1}}","indent":4}`, "a:\n    b: 1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tools.Text(t, "yaml_json", tt.params); got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
		})
	}
	for params, want := range map[string]string{
		`{"operation":"yaml_to_json","text":"a: 1\n---\nb: 2\n"}`:    "text is not valid YAML: the text holds more than one document (all_documents converts each) at line 2, column 1 (byte 5)",
		`{"operation":"yaml_to_json","text":"a: *x\n"}`:              "text is not valid YAML: alias to an anchor not defined before it at line 1, column 4 (byte 3)",
		`{"operation":"json_to_yaml","text":"{\"a\":1}","indent":1}`: "indent must be between 2 and 8 for YAML",
		`{"operation":"json_to_yaml","text":"[1,]"}`:                 "text is not valid JSON: trailing comma before ']' at line 1, column 3 (byte 2)",
	} {
		if got := tools.ToolError(t, "yaml_json", params); got != want {
			t.Errorf("%s: message %q, want %q", params, got, want)
		}
	}
	tools.Refused(t, "yaml_json", `{"operation":"json_to_yaml","text":"1","all_documents":true}`)
}

func TestTOML(t *testing.T) {
	tools := load(t)
	tests := []struct{ name, params, want string }{
		{"toml_to_json", `{"operation":"toml_to_json","text":"title = \"x\"\n[owner]\nname = \"Zoë\"\ndob = 1979-05-27T07:32:00-08:00\n[[p]]\nn = 1\n[[p]]\nn = 2\n","indent":0}`, `{"title":"x","owner":{"name":"Zoë","dob":"1979-05-27T07:32:00-08:00"},"p":[{"n":1},{"n":2}]}`},
		{"json_to_toml", `{"operation":"json_to_toml","text":"{\"b\":{\"x\":1},\"a\":[1,2],\"l\":[{\"k\":true}]}"}`, "a = [1, 2]\n\n[b]\nx = 1\n\n[[l]]\nk = true\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tools.Text(t, "toml_json", tt.params); got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
		})
	}
	for params, want := range map[string]string{
		`{"operation":"toml_to_json","text":"a = 1\na = 2\n"}`: "text is not valid TOML: a key or table is defined twice at line 2, column 1 (byte 6)",
		`{"operation":"toml_to_json","text":"a = 'x\n"}`:       "text is not valid TOML: literal strings cannot have new lines at line 1, column 7 (byte 6)",
		`{"operation":"toml_to_json","text":"a = nan\n"}`:      "text holds inf or nan, which JSON cannot hold",
		`{"operation":"json_to_toml","text":"[1]"}`:            "text must be a JSON object: a TOML document is a table",
		`{"operation":"json_to_toml","text":"{\"a\":null}"}`:   "text cannot be written as TOML: null has no TOML form at line 1, column 6 (byte 5)",
	} {
		if got := tools.ToolError(t, "toml_json", params); got != want {
			t.Errorf("%s: message %q, want %q", params, got, want)
		}
	}
	tools.Refused(t, "toml_json", `{"operation":"json_to_toml","text":"{}","indent":2}`)
}

func TestCSV(t *testing.T) {
	tools := load(t)
	tests := []struct{ name, params, want string }{
		{"csv_to_json header", `{"operation":"csv_to_json","text":"name,age\nZoë,7\n\"Doe, J\",\"\"\n"}`, "[\n  {\n    \"name\": \"Zoë\",\n    \"age\": \"7\"\n  },\n  {\n    \"name\": \"Doe, J\",\n    \"age\": \"\"\n  }\n]"},
		{"csv_to_json typed compact", `{"operation":"csv_to_json","text":"a;b;c\n1;true;\n","delimiter":"semicolon","typed":true,"indent":0}`, `[{"a":1,"b":true,"c":null}]`},
		{"csv_to_json no header", `{"operation":"csv_to_json","text":"a\tb\n","delimiter":"tab","header":false,"indent":0}`, `[["a","b"]]`},
		{"json_to_csv", `{"operation":"json_to_csv","text":"[{\"a\":1,\"b\":\"x,y\"},{\"b\":null,\"c\":[1]}]"}`, "a,b,c\n1,\"x,y\",\n,,[1]\n"},
		{"json_to_csv all crlf", `{"operation":"json_to_csv","text":"[[1,2]]","quote":"all","line_ending":"crlf","delimiter":"pipe"}`, "\"1\"|\"2\"\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tools.Text(t, "csv_json", tt.params); got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
		})
	}
	for params, want := range map[string]string{
		`{"operation":"csv_to_json","text":"a,b\n1,2,3\n"}`:        "text is not valid CSV: row has a different number of fields than the first row (ragged accepts it) at line 2, column 1 (byte 4)",
		`{"operation":"json_to_csv","text":"{\"a\":1}"}`:           "text must be a JSON array whose elements are all objects or all arrays",
		`{"operation":"json_to_csv","text":"[{\"a\":1,}]"}`:        "text is not valid JSON: trailing comma before '}' at line 1, column 8 (byte 7)",
		`{"operation":"json_to_csv","text":"[{\"a\":1,\"a\":2}]"}`: "text is not valid JSON: duplicate object key at line 1, column 9 (byte 8)",
	} {
		if got := tools.ToolError(t, "csv_json", params); got != want {
			t.Errorf("%s: message %q, want %q", params, got, want)
		}
	}
	tools.Refused(t, "csv_json", `{"operation":"csv_to_json","text":"a","delimiter":","}`)
	tools.Refused(t, "csv_json", `{"operation":"json_to_csv","text":"[]","typed":true}`)
	tools.Refused(t, "csv_json", `{"operation":"csv_to_json","text":"a","quote":"all"}`)
}

func TestQueryString(t *testing.T) {
	tools := load(t)
	m, err := tools.Run(t, "query_string", `{"operation":"parse","text":"https://x.test/?q=caf%C3%A9+au+lait&tag=a&tag=b&flag#top"}`)
	if err != nil {
		t.Fatal(err)
	}
	got := canonical(t, m)
	if want := `{"pairs":[{"key":"q","value":"café au lait"},{"key":"tag","value":"a"},{"key":"tag","value":"b"},{"key":"flag"}]}`; got != want {
		t.Errorf("parse = %s, want %s", got, want)
	}
	if got := tools.Text(t, "query_string", `{"operation":"build","pairs":[{"key":"q","value":"a b&c"},{"key":"flag"},{"key":"é","value":""}]}`); got != "q=a+b%26c&flag&%C3%A9=" {
		t.Errorf("build = %q", got)
	}
	if got, want := tools.ToolError(t, "query_string", `{"operation":"parse","text":"a=%zz"}`),
		"text is not a valid query string: '%' must be followed by two hex digits at line 1, column 3 (byte 2)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	tools.Refused(t, "query_string", `{"operation":"build","text":"a=1"}`)
	tools.Refused(t, "query_string", `{"operation":"build","pairs":[{"value":"1"}]}`)
}

func TestXML(t *testing.T) {
	tools := load(t)
	tests := []struct{ name, params, want string }{
		{"format", `{"operation":"format","text":"<a><b x='1'>t</b><!--c--><p>Hi <i>you</i></p></a>"}`, "<a>\n  <b x=\"1\">t</b>\n  <!--c-->\n  <p>Hi <i>you</i></p>\n</a>"},
		{"format indent 4 no comments", `{"operation":"format","text":"<a><!--c--><b/></a>","indent":4,"comments":false}`, "<a>\n    <b/>\n</a>"},
		{"minify", `{"operation":"minify","text":"<a>\n  <!-- c -->\n  <b>é &amp; 😀</b>\n</a>\n"}`, "<a><b>é &amp; 😀</b></a>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tools.Text(t, "xml", tt.params); got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
		})
	}
	if got, want := tools.ToolError(t, "xml", `{"operation":"minify","text":"<a><b></a>"}`),
		"text is not well-formed XML: end tag does not match the open element at line 1, column 7 (byte 6)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	tools.Refused(t, "xml", `{"operation":"format","text":"<a/>","indent":0}`)
	tools.Refused(t, "xml", `{"operation":"minify","text":"<a/>","indent":2}`)
}

func TestJSONDiff(t *testing.T) {
	tools := load(t)
	m, err := tools.Run(t, "json_diff", `{"operation":"diff","a":"{\"n\":1,\"tags\":[\"a\",\"c\"],\"old\":true}","b":"{\"n\":1.0,\"tags\":[\"a\",\"b\",\"c\"],\"new\":null}"}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := canonical(t, m), `{"equal":false,"operations":3,"text":"[{\"op\":\"add\",\"path\":\"/tags/1\",\"value\":\"b\"},{\"op\":\"remove\",\"path\":\"/old\"},{\"op\":\"add\",\"path\":\"/new\",\"value\":null}]"}`; got != want {
		t.Errorf("diff = %s\nwant %s", got, want)
	}
	m, err = tools.Run(t, "json_diff", `{"operation":"diff","a":"[1,{\"x\":2}]","b":"[1e0,{\"x\":2}]","indent":2}`)
	if err != nil || m["equal"] != true || m["text"] != "[]" {
		t.Errorf("equal: %v %v", m, err)
	}
	if got, want := tools.ToolError(t, "json_diff", `{"operation":"diff","a":"{}","b":"[1,]"}`),
		"b is not valid JSON: trailing comma before ']' at line 1, column 3 (byte 2)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	tools.Refused(t, "json_diff", `{"operation":"diff","a":"{}"}`)
}

func TestJSONQuery(t *testing.T) {
	tools := load(t)
	doc := `{\"users\":[{\"name\":\"Zoë\",\"age\":31,\"tags\":[\"admin\"]},{\"name\":\"Ann\",\"age\":17},{\"name\":\"Bo\",\"age\":45.0}]}`
	m, err := tools.Run(t, "json_query", `{"operation":"query","text":"`+doc+`","query":"$.users[?@.age >= 18].name","indent":0}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := canonical(t, m), `{"count":2,"paths":["$['users'][0]['name']","$['users'][2]['name']"],"text":"[\"Zoë\",\"Bo\"]"}`; got != want {
		t.Errorf("query = %s\nwant %s", got, want)
	}
	if got := tools.Text(t, "json_query", `{"operation":"query","text":"`+doc+`","query":"$..tags"}`); got != "[\n  [\n    \"admin\"\n  ]\n]" {
		t.Errorf("text = %q", got)
	}
	if got := tools.Text(t, "json_query", `{"operation":"query","text":"`+doc+`","query":"$.none"}`); got != "[]" {
		t.Errorf("none = %q", got)
	}
	if got, want := tools.ToolError(t, "json_query", `{"operation":"query","text":"{}","query":"$.a["}`),
		"query is not valid JSONPath (RFC 9535): unexpected end of input"; !strings.HasPrefix(got, "query is not valid JSONPath (RFC 9535): ") {
		t.Errorf("message %q, want %q", got, want)
	}
	tools.ToolError(t, "json_query", `{"operation":"query","text":"{","query":"$"}`)
	tools.Refused(t, "json_query", `{"operation":"query","text":"{}","query":""}`)
}

// TestWASM runs items natively and in the built module: the same bytes.
func TestWASM(t *testing.T) {
	tools := load(t)
	mod := bundledtest.Module(t, "dataformat")
	rows := strings.Repeat(`Zoë,\"a \"\"quoted\"\", field\",1.5\n`, 2000)
	for _, params := range []string{
		`{"operation":"csv_to_json","text":"name,note,n\n` + rows + `","typed":true}`,
		`{"operation":"json_to_csv","text":"[{\"a\":1,\"b\":\"x\"},{\"c\":[true]}]","quote":"all"}`,
		`{"operation":"csv_to_json","text":"a,\"b\n"}`,
	} {
		tools.Same(t, mod, "csv_json", params)
	}
	for _, params := range []string{
		`{"operation":"parse","text":"?a=1&b=%C3%A9+x&c"}`,
		`{"operation":"build","pairs":[{"key":"a b","value":"😀"},{"key":"c"}]}`,
		`{"operation":"parse","text":"a=%FF"}`,
	} {
		tools.Same(t, mod, "query_string", params)
	}
	sameMarkup(t, tools, mod)
	doc := strings.Repeat(`- name: Zoë\n  tags: [a, \"b c\"]\n  n: 1.50\n  ref: &r{{i}} {k: v}\n  again: *r{{i}}\n`, 1)
	var yamlDoc strings.Builder
	for i := range 1200 {
		yamlDoc.WriteString(strings.ReplaceAll(doc, "{{i}}", strconv.Itoa(i)))
	}
	laughs := `a: &a [x, x, x, x, x, x, x, x, x]\n`
	for c := 'b'; c <= 'j'; c++ {
		laughs += string(c) + `: &` + string(c) + ` [` + strings.Repeat(`*`+string(c-1)+`, `, 8) + `*` + string(c-1) + `]\n`
	}
	for _, params := range []string{
		`{"operation":"yaml_to_json","text":"` + yamlDoc.String() + `"}`,
		`{"operation":"json_to_yaml","text":"` + big + `"}`,
		`{"operation":"yaml_to_json","text":"` + laughs + `"}`,
		`{"operation":"yaml_to_json","text":"a: [1\nb: 2"}`,
	} {
		tools.Same(t, mod, "yaml_json", params)
	}
	var tomlDoc strings.Builder
	for i := range 1100 {
		tomlDoc.WriteString(`[[item]]\nid = ` + strconv.Itoa(i) + `\nname = \"Zoë \\\"q\\\"\"\nat = 1979-05-27\ntags = [\"a\", { k = 1.5 }]\n`)
	}
	for _, params := range []string{
		`{"operation":"toml_to_json","text":"` + tomlDoc.String() + `"}`,
		`{"operation":"json_to_toml","text":"{\"list\":` + big[:len(big)-len(`null]`)] + `{}]}"}`,
		`{"operation":"toml_to_json","text":"a = 1\n[t]\nb = 2\n[t]\n"}`,
		`{"operation":"json_to_toml","text":"{\"list\":` + big + `}"}`,
	} {
		tools.Same(t, mod, "toml_json", params)
	}
}

// big is a JSON array of 1,000 objects, escaped for a parameters document.
var big = `[` + strings.Repeat(`{\"k\":\"Zoë\",\"n\":1.50,\"a\":[1,2,3]},`, 1000) + `null]`

// sameMarkup runs the xml and json_diff items of TestWASM.
func sameMarkup(t *testing.T, tools *bundledtest.Tools, mod *wasmtool.Tool) {
	items := strings.Repeat(`<item id=\"1\">Zoë &amp; 😀 <b>bold</b></item><!-- c --><empty/>`, 1500)
	for _, params := range []string{
		`{"operation":"format","text":"<?xml version=\"1.0\"?><root>` + items + `</root>"}`,
		`{"operation":"minify","text":"<root>\n  ` + items + `\n</root>"}`,
		`{"operation":"format","text":"<a><b></a>"}`,
	} {
		tools.Same(t, mod, "xml", params)
	}
	bigB := strings.Replace(strings.Replace(big, `1.50`, `2`, 7), `[1,2,3]`, `[1,3]`, 9)
	for _, params := range []string{
		`{"operation":"diff","a":"` + big + `","b":"` + bigB + `","indent":2}`,
		`{"operation":"diff","a":"{\"a\":1}","b":"{\"a\":1,}"}`,
	} {
		tools.Same(t, mod, "json_diff", params)
	}
	for _, params := range []string{
		`{"operation":"query","text":"` + big + `","query":"$[?@.n > 1].k","indent":0}`,
		`{"operation":"query","text":"` + big + `","query":"$..a[-1]"}`,
		`{"operation":"query","text":"{}","query":"$[?foo()]"}`,
		`{"operation":"query","text":"{\"z\":1,\"y\":{\"x\":2,\"w\":[3]},\"v\":4,\"u\":5}","query":"$..*"}`,
	} {
		tools.Same(t, mod, "json_query", params)
	}
}

func TestDocs(t *testing.T) {
	tools := load(t)
	for _, code := range codes {
		tools.CheckDocs(t, "../../docs/tools/"+code+".md", code)
	}
}
