package textpos

import "testing"

func TestAt(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		offset int
		want   Position
	}{
		{name: "start", text: "abc", offset: 0, want: Position{0, 1, 1}},
		{name: "empty text", text: "", offset: 0, want: Position{0, 1, 1}},
		{name: "end", text: "abc", offset: 3, want: Position{3, 1, 4}},
		{name: "past end", text: "abc", offset: 9, want: Position{3, 1, 4}},
		{name: "negative", text: "abc", offset: -2, want: Position{0, 1, 1}},
		{name: "second line", text: "a\nbc", offset: 3, want: Position{3, 2, 2}},
		{name: "crlf is one break", text: "a\r\nbc", offset: 4, want: Position{4, 2, 2}},
		{name: "lone cr", text: "a\rbc", offset: 3, want: Position{3, 2, 2}},
		{name: "columns count code points", text: "é😀中x", offset: 9, want: Position{9, 1, 4}},
		{name: "after newline at end", text: "a\n", offset: 2, want: Position{2, 2, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := At(tt.text, tt.offset); got != tt.want {
				t.Errorf("At(%q, %d) = %+v, want %+v", tt.text, tt.offset, got, tt.want)
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	err := New("{\n  \"a\" 1}", 8, "text is not valid JSON", "expected ':' after object key")
	want := "text is not valid JSON: expected ':' after object key at line 2, column 7 (byte 8)"
	if got := err.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
