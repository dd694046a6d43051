package csvjson

import (
	"errors"
	"testing"

	"github.com/toolhost/toolhost/plugins-src/internal/jsontree"
	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

func read(t *testing.T, text string, o ReadOptions) string {
	t.Helper()
	v, err := ToJSON(text, o)
	if err != nil {
		t.Fatalf("ToJSON(%q): %v", text, err)
	}
	s, _ := jsontree.Encode(v, 0, 0)
	return s
}

// The records of RFC 4180 §2: CRLF or LF line breaks, an optional final
// break, quoted fields holding commas, line breaks and doubled quotes.
func TestToJSON(t *testing.T) {
	tests := []struct {
		name, text string
		o          ReadOptions
		want       string
	}{
		{"rfc 4180 §2.1–2.2", "aaa,bbb,ccc\r\nzzz,yyy,xxx\r\n", ReadOptions{Delimiter: "comma"}, `[["aaa","bbb","ccc"],["zzz","yyy","xxx"]]`},
		{"rfc 4180 §2.3 header", "field_name,field_name2\naaa,bbb\n", ReadOptions{Delimiter: "comma", Header: true}, `[{"field_name":"aaa","field_name2":"bbb"}]`},
		{"rfc 4180 §2.6–2.7 quotes", "\"aaa\",\"b\r\nbb\",\"c\"\"cc\"\nzzz,yyy,xxx", ReadOptions{Delimiter: "comma"}, `[["aaa","b\nbb","c\"cc"],["zzz","yyy","xxx"]]`},
		{"semicolon typed", "n;ok;x;s\n1.5e3;true;;007\n", ReadOptions{Delimiter: "semicolon", Header: true, Typed: true}, `[{"n":1.5e3,"ok":true,"x":null,"s":"007"}]`},
		{"tab", "a\tb\n1\t2\n", ReadOptions{Delimiter: "tab"}, `[["a","b"],["1","2"]]`},
		{"ragged header", "a,b,c\n1\n1,2,3\n", ReadOptions{Delimiter: "comma", Header: true, Ragged: true}, `[{"a":"1"},{"a":"1","b":"2","c":"3"}]`},
		{"lazy quotes", "a,b\"c\n", ReadOptions{Delimiter: "comma", LazyQuotes: true}, `[["a","b\"c"]]`},
		{"empty", "", ReadOptions{Delimiter: "pipe", Header: true}, `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := read(t, tt.text, tt.o); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestToJSONFaults(t *testing.T) {
	tests := []struct {
		name, text string
		o          ReadOptions
		want       string
	}{
		{"bare quote", "a,b\nc,d\"e\n", ReadOptions{Delimiter: "comma"}, "text is not valid CSV: '\"' in an unquoted field (lazy_quotes accepts it) at line 2, column 4 (byte 7)"},
		{"unterminated quote", "a,\"b\n", ReadOptions{Delimiter: "comma"}, "text is not valid CSV: extraneous or missing '\"' in a quoted field at line 2, column 1 (byte 5)"},
		{"field count", "a,b\nc\n", ReadOptions{Delimiter: "comma"}, "text is not valid CSV: row has a different number of fields than the first row (ragged accepts it) at line 2, column 1 (byte 4)"},
		{"duplicate header", "a,a\n1,2\n", ReadOptions{Delimiter: "comma", Header: true}, "text is not valid CSV: two columns of the header row have the same name at line 1, column 1 (byte 0)"},
		{"row wider than header", "a\n1,2\n", ReadOptions{Delimiter: "comma", Header: true, Ragged: true}, "text is not valid CSV: row has more fields than the header row at line 2, column 1 (byte 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ToJSON(tt.text, tt.o)
			var pe *textpos.Error
			if !errors.As(err, &pe) || err.Error() != tt.want {
				t.Errorf("error %v\nwant %q", err, tt.want)
			}
		})
	}
	if _, err := ToJSON("a", ReadOptions{Delimiter: "colon"}); !errors.Is(err, ErrDelimiter) {
		t.Errorf("delimiter: %v", err)
	}
}

func TestFromJSON(t *testing.T) {
	tests := []struct {
		name, json string
		o          WriteOptions
		want       string
	}{
		{"objects, union of keys", `[{"a":1,"b":"x"},{"c":true,"a":null}]`, WriteOptions{Delimiter: "comma", Header: true}, "a,b,c\n1,x,\n,,true\n"},
		{"quoting as RFC 4180 §2.6–2.7", `[["a,b","say \"hi\"","two\nlines"," pad"]]`, WriteOptions{Delimiter: "comma"}, "\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\" pad\"\n"},
		{"quote all, crlf, semicolon", `[["a",1],["b;c",2]]`, WriteOptions{Delimiter: "semicolon", QuoteAll: true, CRLF: true}, "\"a\";\"1\"\r\n\"b;c\";\"2\"\r\n"},
		{"nested as JSON", `[{"tags":["x","y"],"o":{"k":1}}]`, WriteOptions{Delimiter: "tab", Header: false}, "\"[\"\"x\"\",\"\"y\"\"]\"\t\"{\"\"k\"\":1}\"\n"},
		{"empty array", `[]`, WriteOptions{Delimiter: "comma", Header: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := jsontree.Parse(tt.json, "x")
			if err != nil {
				t.Fatal(err)
			}
			got, err := FromJSON(v, tt.o)
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v, want %q", got, err, tt.want)
			}
			// What FromJSON writes, ToJSON reads back.
			if tt.o.Delimiter == "comma" && !tt.o.Header {
				read(t, got, ReadOptions{Delimiter: "comma", Ragged: true})
			}
		})
	}
	for _, j := range []string{`{"a":1}`, `[1,2]`, `[{"a":1},[1]]`, `[[1],{"a":1}]`} {
		v, _ := jsontree.Parse(j, "x")
		if _, err := FromJSON(v, WriteOptions{Delimiter: "comma"}); !errors.Is(err, ErrShape) {
			t.Errorf("%s: %v, want ErrShape", j, err)
		}
	}
}
