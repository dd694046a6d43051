package wire

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The appenders write encoding/json's bytes with HTML escaping off, after
// what b held.
func TestAppenders(t *testing.T) {
	std := func(v any) []byte {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	for _, s := range []string{"", "abc_1.2-x", "a\"b", `back\slash`, "tab\t", "<&>", "é", "\u2028", "\x7f"} {
		got, err := AppendString([]byte("x:"), s)
		if want := append([]byte("x:"), std(s)...); err != nil || !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, %v; want %s", s, got, err, want)
		}
	}
	v := map[string]any{"a": []int{1, 2}, "h": "<b>"}
	if got, err := AppendJSON(nil, v); err != nil || !bytes.Equal(got, std(v)) {
		t.Errorf("AppendJSON = %s, %v", got, err)
	}
	if got, err := AppendJSON([]byte("keep"), func() {}); err == nil || string(got) != "keep" {
		t.Errorf("AppendJSON of a func = %q, %v; want b unchanged and an error", got, err)
	}
}
