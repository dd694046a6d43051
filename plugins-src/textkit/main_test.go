package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/bundledtest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
)

// codes are the package's services, in declaration order.
var codes = []string{"text_stats", "lines", "whitespace", "line_endings", "unicode_normalize", "html_entities", "string_escape", "rot13", "lorem_ipsum", "line_diff", "regex"}

func load(t *testing.T) *bundledtest.Tools {
	t.Helper()
	return bundledtest.Load(t, codes...)
}

func TestDeclaration(t *testing.T) {
	tools := load(t)
	for _, c := range []struct{ code, op string }{
		{"text_stats", "count"}, {"lines", "sort"}, {"lines", "shuffle"}, {"whitespace", "trim"}, {"line_endings", "convert"},
	} {
		if got := tools.MaxLength(c.code, c.op, "text"); got != bundled.MaxTextLength {
			t.Errorf("%s/%s text maxLength = %d", c.code, c.op, got)
		}
	}
}

// want runs an item that must succeed and compares its canonical result.
func want(t *testing.T, tools *bundledtest.Tools, code, params, result string) {
	t.Helper()
	got, err := tools.Run(t, code, params)
	if err != nil {
		t.Fatalf("%s %s: %v", code, params, err)
	}
	if g, w := canon(t, got), canonString(t, result); g != w {
		t.Errorf("%s %s:\n got %s\nwant %s", code, params, g, w)
	}
}

func TestTextStats(t *testing.T) {
	tools := load(t)
	// "😀".length is 2 in JavaScript (UTF-16), 1 code point, 4 bytes.
	want(t, tools, "text_stats", `{"operation":"count","text":"Héllo wörld 😀\n\n  line 3\r\n"}`,
		`{"bytes":30,"code_points":25,"utf16_units":26,"letters":14,"digits":1,"spaces":9,"words":5,"lines":3,"blank_lines":1,"longest_line":13}`)
	want(t, tools, "text_stats", `{"operation":"count","text":""}`,
		`{"bytes":0,"code_points":0,"utf16_units":0,"letters":0,"digits":0,"spaces":0,"words":0,"lines":0,"blank_lines":0,"longest_line":0}`)
	tools.Refused(t, "text_stats", `{"operation":"count"}`)
	tools.Refused(t, "text_stats", `{"operation":"count","text":"x","extra":1}`)
	tools.Refused(t, "text_stats", `{"operation":"count","text":"`+strings.Repeat("a", bundled.MaxTextLength+1)+`"}`)
}

func TestLines(t *testing.T) {
	tools := load(t)
	tests := []struct{ name, params, result string }{
		{"sort", `{"operation":"sort","text":"pear\nApple\nbanana\n"}`, `{"text":"Apple\nbanana\npear\n","lines":3}`},
		{"sort desc ignoring case", `{"operation":"sort","text":"b\nA\nc","order":"desc","ignore_case":true}`, `{"text":"c\nb\nA","lines":3}`},
		{"sort numeric", `{"operation":"sort","text":"10 x\r\n9 x\r\nz\r\n-1 x","numeric":true}`, `{"text":"-1 x\r\n9 x\r\n10 x\r\nz","lines":4}`},
		{"dedupe", `{"operation":"dedupe","text":"a\nb\na\nA\n"}`, `{"text":"a\nb\nA\n","lines":3,"removed":1}`},
		{"dedupe ignoring case", `{"operation":"dedupe","text":"a\nb\na\nA\n","ignore_case":true}`, `{"text":"a\nb\n","lines":2,"removed":2}`},
		{"reverse", `{"operation":"reverse","text":"1\n2\n3"}`, `{"text":"3\n2\n1","lines":3}`},
		{"shuffle", `{"operation":"shuffle","text":"a\nb\nc\nd\ne\nf\ng","seed":42}`, `{"text":"d\nb\ng\ne\na\nf\nc","lines":7}`},
		{"empty", `{"operation":"reverse","text":""}`, `{"text":"","lines":0}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { want(t, tools, "lines", tt.params, tt.result) })
	}
	tools.Refused(t, "lines", `{"operation":"shuffle","text":"a"}`)
	tools.Refused(t, "lines", `{"operation":"shuffle","text":"a","seed":-1}`)
	tools.Refused(t, "lines", `{"operation":"shuffle","text":"a","seed":9007199254740992}`)
	tools.Refused(t, "lines", `{"operation":"reverse","text":"a","seed":1}`)
	tools.Refused(t, "lines", `{"operation":"sort","text":"a","order":"up"}`)
	tools.Refused(t, "lines", `{"operation":"dedupe","text":"a","numeric":true}`)
	tools.Refused(t, "lines", `{"operation":"rotate","text":"a"}`)
}

func TestWhitespace(t *testing.T) {
	tools := load(t)
	tests := []struct{ name, params, result string }{
		{"trim lines", `{"operation":"trim","text":"  a \n\tb\t"}`, `{"text":"a\nb"}`},
		{"trim text end", `{"operation":"trim","text":"  a \n\n","where":"end","scope":"text"}`, `{"text":"  a"}`},
		{"trim start", `{"operation":"trim","text":"  a \n  b ","where":"start"}`, `{"text":"a \nb "}`},
		{"collapse", `{"operation":"collapse","text":" a  \t b \n\u00a0c\u3000 d"}`, `{"text":"a b\nc d"}`},
		{"remove blank lines", `{"operation":"remove_blank_lines","text":"a\n\n \nb\n"}`, `{"text":"a\nb\n","removed":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { want(t, tools, "whitespace", tt.params, tt.result) })
	}
	tools.Refused(t, "whitespace", `{"operation":"trim","text":"a","where":"middle"}`)
	tools.Refused(t, "whitespace", `{"operation":"collapse","text":"a","scope":"text"}`)
}

func TestLineEndings(t *testing.T) {
	tools := load(t)
	want(t, tools, "line_endings", `{"operation":"convert","text":"a\r\nb\nc\rd","to":"crlf"}`, `{"text":"a\r\nb\r\nc\r\nd"}`)
	want(t, tools, "line_endings", `{"operation":"convert","text":"a\r\nb\r\n","to":"lf"}`, `{"text":"a\nb\n"}`)
	want(t, tools, "line_endings", `{"operation":"convert","text":"a\nb","to":"cr"}`, `{"text":"a\rb"}`)
	want(t, tools, "line_endings", `{"operation":"detect","text":"a\r\nb\nc\r\n"}`, `{"lf":1,"crlf":2,"cr":0,"style":"mixed"}`)
	want(t, tools, "line_endings", `{"operation":"detect","text":"abc"}`, `{"lf":0,"crlf":0,"cr":0,"style":"none"}`)
	tools.Refused(t, "line_endings", `{"operation":"convert","text":"a"}`)
	tools.Refused(t, "line_endings", `{"operation":"convert","text":"a","to":"nel"}`)
	tools.Refused(t, "line_endings", `{"operation":"detect","text":"a","to":"lf"}`)
}

func TestUnicodeNormalize(t *testing.T) {
	tools := load(t)
	// UAX #15's examples: the Angstrom sign, the fi ligature, ṩ.
	for form, result := range map[string]string{
		"nfc": `{"text":"\u00c5 \ufb01 \u1e69"}`, "nfd": `{"text":"A\u030a \ufb01 s\u0323\u0307"}`,
		"nfkc": `{"text":"\u00c5 fi \u1e69"}`, "nfkd": `{"text":"A\u030a fi s\u0323\u0307"}`,
	} {
		want(t, tools, "unicode_normalize", `{"operation":"normalize","text":"\u212b \ufb01 s\u0307\u0323","form":"`+form+`"}`, result)
	}
	want(t, tools, "unicode_normalize", `{"operation":"check","text":"A\u030a","form":"nfc"}`, `{"normalized":false}`)
	want(t, tools, "unicode_normalize", `{"operation":"check","text":"A\u030a","form":"nfd"}`, `{"normalized":true}`)
	tools.Refused(t, "unicode_normalize", `{"operation":"normalize","text":"a","form":"NFC"}`)
	tools.Refused(t, "unicode_normalize", `{"operation":"check","text":"a"}`)
	// U+FDFA decomposes to 18 code points (33 bytes) under NFKD: past the result bound.
	msg := tools.ToolError(t, "unicode_normalize", `{"operation":"normalize","form":"nfkd","text":"`+strings.Repeat("\ufdfa", 10000)+`"}`)
	if msg != errTooLarge.Error() {
		t.Errorf("message %q", msg)
	}
}

func TestHTMLEntities(t *testing.T) {
	tools := load(t)
	want(t, tools, "html_entities", `{"operation":"encode","text":"<a href=\"x\">Tom & Jerry's</a>"}`, `{"text":"&lt;a href=&#34;x&#34;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;"}`)
	want(t, tools, "html_entities", `{"operation":"encode","text":"café 😀","mode":"non_ascii"}`, `{"text":"caf&#xE9; &#x1F600;"}`)
	want(t, tools, "html_entities", `{"operation":"decode","text":"&lt;p&gt; &eacute;&#233;&#xE9; &amp &unknown;"}`, `{"text":"<p> ééé & &unknown;"}`)
	tools.Refused(t, "html_entities", `{"operation":"encode","text":"a","mode":"all"}`)
	tools.Refused(t, "html_entities", `{"operation":"decode","text":"a","mode":"minimal"}`)
	msg := tools.ToolError(t, "html_entities", `{"operation":"encode","mode":"non_ascii","text":"`+strings.Repeat("é", 50000)+`"}`)
	if msg != errTooLarge.Error() {
		t.Errorf("message %q", msg)
	}
}

func TestStringEscape(t *testing.T) {
	tools := load(t)
	tests := []struct{ name, params, result string }{
		{"json", `{"operation":"json_escape","text":"say \"hi\"\n\ttab é"}`, `{"text":"say \\\"hi\\\"\\n\\ttab é"}`},
		{"json ascii quoted", `{"operation":"json_escape","text":"é😀","ascii":true,"quote":true}`, `{"text":"\"\\u00E9\\uD83D\\uDE00\""}`},
		{"json unescape", `{"operation":"json_unescape","text":"a\\u00e9\\n\\/"}`, `{"text":"aé\n/"}`},
		{"json unescape literal", `{"operation":"json_unescape","text":"\"x\\\"y\""}`, `{"text":"x\"y"}`},
		{"js", `{"operation":"js_escape","text":"it's \"q\" \u2028"}`, `{"text":"it\\'s \\\"q\\\" \\u2028"}`},
		{"js unescape", `{"operation":"js_unescape","text":"\\x41\\u{1F600}\\'"}`, `{"text":"A😀'"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { want(t, tools, "string_escape", tt.params, tt.result) })
	}
	for params, msg := range map[string]string{
		`{"operation":"json_unescape","text":"a\"b"}`:    "text is not a valid JSON string: unescaped quote at line 1, column 2 (byte 1)",
		`{"operation":"json_unescape","text":"\\uD800"}`: "text is not a valid JSON string: lone surrogate at line 1, column 1 (byte 0)",
		`{"operation":"js_unescape","text":"ab\\1"}`:     "text is not a valid JavaScript string: octal escape (not allowed in strict mode) at line 1, column 3 (byte 2)",
		`{"operation":"js_unescape","text":"\n\\xZ"}`:    "text is not a valid JavaScript string: incomplete \\x escape at line 2, column 1 (byte 1)",
	} {
		if got := tools.ToolError(t, "string_escape", params); got != msg {
			t.Errorf("%s: %q, want %q", params, got, msg)
		}
	}
	tools.Refused(t, "string_escape", `{"operation":"js_escape","text":"a","quote":true}`)
	tools.Refused(t, "string_escape", `{"operation":"json_unescape","text":"a","ascii":true}`)
	tools.Refused(t, "string_escape", `{"operation":"escape","text":"a"}`)
}

func TestRot13(t *testing.T) {
	tools := load(t)
	// tr 'A-Za-z' 'N-ZA-Mn-za-m' and tr '!-~' 'P-~!-O' give the same.
	want(t, tools, "rot13", `{"operation":"rot13","text":"Why did the chicken cross the road? é"}`, `{"text":"Jul qvq gur puvpxra pebff gur ebnq? é"}`)
	want(t, tools, "rot13", `{"operation":"rot47","text":"Hello, World!"}`, `{"text":"w6==@[ (@C=5P"}`)
	want(t, tools, "rot13", `{"operation":"caesar","text":"Attack at dawn","shift":3}`, `{"text":"Dwwdfn dw gdzq"}`)
	want(t, tools, "rot13", `{"operation":"caesar","text":"Dwwdfn dw gdzq","shift":-3}`, `{"text":"Attack at dawn"}`)
	tools.Refused(t, "rot13", `{"operation":"caesar","text":"a","shift":26}`)
	tools.Refused(t, "rot13", `{"operation":"caesar","text":"a"}`)
	tools.Refused(t, "rot13", `{"operation":"rot13","text":"a","shift":1}`)
}

func TestLoremIpsum(t *testing.T) {
	tools := load(t)
	want(t, tools, "lorem_ipsum", `{"operation":"generate","unit":"words","count":8,"seed":1}`, `{"text":"lorem ipsum dolor sit amet `+wordsOfSeed1+`","words":8}`)
	m, err := tools.Run(t, "lorem_ipsum", `{"operation":"generate","unit":"paragraphs","count":3}`)
	if err != nil || !strings.HasPrefix(m["text"].(string), "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ") || strings.Count(m["text"].(string), "\n\n") != 2 {
		t.Errorf("paragraphs: %v %v", m, err)
	}
	for _, count := range []string{"101"} {
		if msg := tools.ToolError(t, "lorem_ipsum", `{"operation":"generate","unit":"paragraphs","count":`+count+`}`); !strings.HasPrefix(msg, "count must be") {
			t.Errorf("message %q", msg)
		}
	}
	tools.Refused(t, "lorem_ipsum", `{"operation":"generate","unit":"words","count":0}`)
	tools.Refused(t, "lorem_ipsum", `{"operation":"generate","unit":"words","count":10001}`)
	tools.Refused(t, "lorem_ipsum", `{"operation":"generate","unit":"pages","count":1}`)
	tools.Refused(t, "lorem_ipsum", `{"operation":"generate","unit":"words"}`)
}

// wordsOfSeed1 are the three words after the classic five for seed 1.
const wordsOfSeed1 = "dolorem architecto neque"

func TestLineDiff(t *testing.T) {
	tools := load(t)
	// GNU diff -u --label old --label new gives the same.
	want(t, tools, "line_diff", `{"operation":"unified","old":"a\nb\nc\n","new":"a\nB\nc\nd\n"}`,
		`{"text":"--- old\n+++ new\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n","equal":false,"added":2,"removed":1,"hunks":1}`)
	want(t, tools, "line_diff", `{"operation":"unified","old":"x","new":"x"}`, `{"text":"","equal":true,"added":0,"removed":0,"hunks":0}`)
	want(t, tools, "line_diff", `{"operation":"unified","old":"a\nb","new":"a\nb\n","context":0,"old_label":"a/f","new_label":"b/f"}`,
		`{"text":"--- a/f\n+++ b/f\n@@ -2 +2 @@\n-b\n\\ No newline at end of file\n+b\n","equal":false,"added":1,"removed":1,"hunks":1}`)
	tools.Refused(t, "line_diff", `{"operation":"unified","old":"a"}`)
	tools.Refused(t, "line_diff", `{"operation":"unified","old":"a","new":"b","context":101}`)
	tools.Refused(t, "line_diff", `{"operation":"unified","old":"a","new":"b","old_label":"x\ny"}`)
}

func TestRegex(t *testing.T) {
	tools := load(t)
	want(t, tools, "regex", `{"operation":"test","pattern":"\\d+","text":"a1 b22 c333"}`, `{"matched":true,"count":3}`)
	want(t, tools, "regex", `{"operation":"test","pattern":"^B$","text":"a\nb","ignore_case":true,"multiline":true}`, `{"matched":true,"count":1}`)
	want(t, tools, "regex", `{"operation":"test","pattern":"a.b","text":"a\nb"}`, `{"matched":false,"count":0}`)
	want(t, tools, "regex", `{"operation":"test","pattern":"a.b","text":"a\nb","dot_all":true}`, `{"matched":true,"count":1}`)
	want(t, tools, "regex", `{"operation":"replace","pattern":"(\\w+)@(\\w+)","text":"ann@example bob@test","replacement":"${2}:$1"}`, `{"text":"example:ann test:bob","count":2}`)
	want(t, tools, "regex", `{"operation":"replace","pattern":"o","text":"foo","replacement":"$0","literal":true}`, `{"text":"f$0$0","count":2}`)
	want(t, tools, "regex", `{"operation":"extract","pattern":"(é+)(x)?","text":"aéé béx"}`,
		`{"matches":[{"match":"éé","start":1,"end":3,"groups":["éé",""]},{"match":"éx","start":5,"end":7,"groups":["é","x"]}],"more":false}`)
	want(t, tools, "regex", `{"operation":"extract","pattern":"\\d","text":"1 2 3","limit":2}`,
		`{"matches":[{"match":"1","start":0,"end":1,"groups":[]},{"match":"2","start":2,"end":3,"groups":[]}],"more":true}`)
	for pattern, msg := range map[string]string{
		`a(?=b)`: "pattern is not a valid RE2 expression: invalid or unsupported Perl syntax",
		`(a`:     "pattern is not a valid RE2 expression: missing closing )",
		`(a)\\1`: "pattern is not a valid RE2 expression: invalid escape sequence",
	} {
		if got := tools.ToolError(t, "regex", `{"operation":"test","pattern":"`+pattern+`","text":"ab"}`); got != msg {
			t.Errorf("%s: %q, want %q", pattern, got, msg)
		}
	}
	if got := tools.ToolError(t, "regex", `{"operation":"extract","pattern":"(.+)","text":"`+strings.Repeat("x", 130000)+`"}`); got != errTooLarge.Error() {
		t.Errorf("large extract: %q", got)
	}
	// 100,000 matches of 4 KiB each would be 400 MB.
	if got := tools.ToolError(t, "regex", `{"operation":"replace","pattern":"x","text":"`+strings.Repeat("x", 100000)+`","replacement":"`+strings.Repeat("$0", 2048)+`"}`); got != errTooLarge.Error() {
		t.Errorf("growing replace: %q", got)
	}
	tools.Refused(t, "regex", `{"operation":"replace","pattern":"a","text":"a"}`)
	tools.Refused(t, "regex", `{"operation":"test","pattern":"a","text":"a","limit":5}`)
	tools.Refused(t, "regex", `{"operation":"extract","pattern":"a","text":"a","limit":1001}`)
	tools.Refused(t, "regex", `{"operation":"test","pattern":"`+strings.Repeat("a", 1025)+`","text":"a"}`)
}

// TestWASM runs items natively and in the built module: the same bytes.
func TestWASM(t *testing.T) {
	tools := load(t)
	mod := bundledtest.Module(t, "textkit")
	var oldLines, newLines strings.Builder // 8,000 lines each, all different: the bounded search's worst case
	for i := range 8000 {
		oldLines.WriteString("a" + strconv.Itoa(i) + `\n`)
		newLines.WriteString("b" + strconv.Itoa(i) + `\n`)
	}
	unit := `Héllo wörld  \t 12 Привет 中文 😀\r\n  \nzeta 3\n` // JSON escapes
	long, half := strings.Repeat(unit, 1500), strings.Repeat(unit, 700)
	for _, item := range []struct{ code, params string }{
		{"text_stats", `{"operation":"count","text":"` + long + `"}`},
		{"text_stats", `{"operation":"count","text":"é😀\n"}`},
		{"lines", `{"operation":"sort","text":"` + long + `","numeric":true,"ignore_case":true}`},
		{"lines", `{"operation":"sort","text":"` + long + `","order":"desc"}`},
		{"lines", `{"operation":"dedupe","text":"` + long + `"}`},
		{"lines", `{"operation":"reverse","text":"` + long + `"}`},
		{"lines", `{"operation":"shuffle","text":"` + long + `","seed":9007199254740991}`},
		{"whitespace", `{"operation":"trim","text":"` + long + `","where":"end"}`},
		{"whitespace", `{"operation":"collapse","text":"` + long + `"}`},
		{"whitespace", `{"operation":"remove_blank_lines","text":"` + long + `"}`},
		{"line_endings", `{"operation":"convert","text":"` + long + `","to":"cr"}`},
		{"line_endings", `{"operation":"detect","text":"` + long + `"}`},
		{"unicode_normalize", `{"operation":"normalize","text":"` + long + `\u212b\ufb01s\u0307\u0323","form":"nfkd"}`},
		{"unicode_normalize", `{"operation":"normalize","text":"` + long + `A\u030a","form":"nfc"}`},
		{"unicode_normalize", `{"operation":"check","text":"` + long + `","form":"nfd"}`},
		{"html_entities", `{"operation":"encode","text":"` + long + `<&>\"'","mode":"non_ascii"}`},
		{"html_entities", `{"operation":"decode","text":"&eacute;&#x1F600;&amp &NotNestedGreaterGreater; &bogus; ` + long + `"}`},
		{"string_escape", `{"operation":"json_escape","text":"` + long + `","ascii":true,"quote":true}`},
		{"string_escape", `{"operation":"js_escape","text":"` + long + `\u2028\u0000 ${x}"}`},
		{"string_escape", `{"operation":"json_unescape","text":"\"a\\u00e9\\uD83D\\uDE00\\n\""}`},
		{"string_escape", `{"operation":"json_unescape","text":"bad \\uD800"}`},
		{"string_escape", `{"operation":"js_unescape","text":"\\x41\\u{1F600}\\'\\\n"}`},
		{"string_escape", `{"operation":"js_unescape","text":"\\07"}`},
		{"rot13", `{"operation":"rot13","text":"` + long + `"}`},
		{"rot13", `{"operation":"rot47","text":"` + long + `"}`},
		{"rot13", `{"operation":"caesar","text":"` + long + `","shift":-7}`},
		{"lorem_ipsum", `{"operation":"generate","unit":"paragraphs","count":100,"seed":9007199254740991}`},
		{"lorem_ipsum", `{"operation":"generate","unit":"words","count":10000,"classic":false}`},
		{"lorem_ipsum", `{"operation":"generate","unit":"sentences","count":1001}`},
		{"line_diff", `{"operation":"unified","old":"` + half + `","new":"` + strings.ReplaceAll(half, "zeta", "eta") + `"}`},
		{"line_diff", `{"operation":"unified","old":"` + oldLines.String() + `","new":"` + newLines.String() + `"}`},
		{"line_diff", `{"operation":"unified","old":"a\nb","new":"a\nc\n","context":0,"old_label":"a/x.txt","new_label":"b/x.txt"}`},
		{"regex", `{"operation":"test","pattern":"(?i)привет|\\d+","text":"` + long + `"}`},
		{"regex", `{"operation":"replace","pattern":"(\\p{L}+) (\\p{L}+)","replacement":"${2}_$1","text":"` + long + `"}`},
		{"regex", `{"operation":"extract","pattern":"(\\d)(x)?","limit":1000,"text":"` + long + `"}`},
		{"regex", `{"operation":"test","pattern":"a(?=b)","text":"ab"}`},
		{"regex", `{"operation":"replace","pattern":"x","text":"` + strings.Repeat("x", 100000) + `","replacement":"` + strings.Repeat("$0", 2048) + `"}`},
	} {
		tools.Same(t, mod, item.code, item.params)
	}
}

func TestDocs(t *testing.T) {
	tools := load(t)
	for _, code := range codes {
		tools.CheckDocs(t, "../../docs/tools/"+code+".md", code)
	}
}
