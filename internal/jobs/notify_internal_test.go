package jobs

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// A note's payload stays under PostgreSQL's 8000-byte limit: a long
// progress message is cut, on a character's boundary, and the rest kept.
func TestNotePayload(t *testing.T) {
	tests := []struct {
		name    string
		message string
		cut     bool
	}{
		{name: "short", message: "page 3 of 8"},
		{name: "empty", message: ""},
		{name: "long ascii", message: strings.Repeat("a", 20000), cut: true},
		{name: "long multibyte", message: strings.Repeat("é", 5000), cut: true},
		{name: "long escaped", message: strings.Repeat("\x01", 3000), cut: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := note{Job: "j_0123456789abcdef", Version: 7, Kind: EventProgress, Origin: "0123456789abcdef",
				Done: 3, Total: 8, Message: tt.message}
			p := n.payload()
			if len(p) >= 8000 {
				t.Fatalf("payload of %d bytes", len(p))
			}
			var got note
			if err := json.Unmarshal([]byte(p), &got); err != nil {
				t.Fatal(err)
			}
			if !utf8.ValidString(got.Message) || !strings.HasPrefix(tt.message, got.Message) {
				t.Fatalf("message %q is no prefix of the report's", got.Message)
			}
			if cut := got.Message != tt.message; cut != tt.cut {
				t.Fatalf("message cut: %v, want %v", cut, tt.cut)
			}
			got.Message = n.Message
			if got != n {
				t.Fatalf("note %+v, want %+v", got, n)
			}
		})
	}
}
