package textstats

import "testing"

// The expected counts follow the definitions in the package comment; the
// UTF-16 lengths are what JavaScript's String.prototype.length gives for
// the same strings ("😀".length === 2), and the line counts agree with
// `wc -l` plus one for an unterminated last line.
func TestCount(t *testing.T) {
	tests := []struct {
		name string
		text string
		want Stats
	}{
		{"empty", "", Stats{}},
		{"one word", "héllo", Stats{Bytes: 6, CodePoints: 5, UTF16Units: 5, Letters: 5, Words: 1, Lines: 1, LongestLine: 5}},
		{"astral", "😀 a1", Stats{Bytes: 7, CodePoints: 4, UTF16Units: 5, Letters: 1, Digits: 1, Spaces: 1, Words: 2, Lines: 1, LongestLine: 4}},
		{"terminated line", "ab\n", Stats{Bytes: 3, CodePoints: 3, UTF16Units: 3, Letters: 2, Spaces: 1, Words: 1, Lines: 1, LongestLine: 2}},
		{"blank lines", "a\n\n  \nb", Stats{Bytes: 7, CodePoints: 7, UTF16Units: 7, Letters: 2, Spaces: 5, Words: 2, Lines: 4, BlankLines: 2, LongestLine: 2}},
		{"crlf and cr", "a\r\nbb\rccc", Stats{Bytes: 9, CodePoints: 9, UTF16Units: 9, Letters: 6, Spaces: 3, Words: 3, Lines: 3, LongestLine: 3}},
		{"only a break", "\n", Stats{Bytes: 1, CodePoints: 1, UTF16Units: 1, Spaces: 1, Lines: 1, BlankLines: 1}},
		{"cjk and combining", "中文 e\u0301", Stats{Bytes: 10, CodePoints: 5, UTF16Units: 5, Letters: 3, Spaces: 1, Words: 2, Lines: 1, LongestLine: 5}},
		{"tabs and nbsp", "a\t\u00a0b", Stats{Bytes: 5, CodePoints: 4, UTF16Units: 4, Letters: 2, Spaces: 2, Words: 2, Lines: 1, LongestLine: 4}},
		{"arabic digits", "٣٤", Stats{Bytes: 4, CodePoints: 2, UTF16Units: 2, Digits: 2, Words: 1, Lines: 1, LongestLine: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Count(tt.text); got != tt.want {
				t.Errorf("Count(%q)\n got %+v\nwant %+v", tt.text, got, tt.want)
			}
		})
	}
}

func BenchmarkCount(b *testing.B) {
	text := ""
	for range 2000 {
		text += "Héllo wörld, 中文 😀 text\n"
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Count(text)
	}
}
