package bundledtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/internal/wire"
)

// CheckDocs runs the examples of a tool's documentation page and fails the
// test unless each gives exactly what the page shows. An example is a line
// "Parameters:" followed by a fenced block holding the parameters document,
// then a line "Result:" and a fenced block holding the result document (or
// "Error:" and the tool error {"code","message","retryable"}), and
// optionally a line "Text:" and a fenced block holding the result's "text"
// exactly, for reading. Documents compare as canonical JSON.
func (tools *Tools) CheckDocs(t *testing.T, path, code string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	// block returns the contents of the fenced block after line i and the
	// line after its end.
	block := func(i int) (string, int) {
		for ; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
		}
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body = append(body, lines[i])
		}
		if i >= len(lines) {
			t.Fatalf("%s: unterminated code block", path)
		}
		return strings.Join(body, "\n"), i + 1
	}
	examples := 0
	var lastText *string
	for i := 0; i < len(lines); i++ {
		switch strings.TrimSpace(lines[i]) {
		case "Parameters:":
			var params string
			params, i = block(i + 1)
			examples++
			lastText = nil
			for ; i < len(lines) && strings.TrimSpace(lines[i]) == ""; i++ {
			}
			if i >= len(lines) {
				t.Fatalf("%s: parameters without a result", path)
			}
			kind := strings.TrimSpace(lines[i])
			var want string
			want, i = block(i + 1)
			i--
			out, err := tools.run(t, code, params)
			switch kind {
			case "Result:":
				if err != nil {
					t.Errorf("%s: %s: %v", path, params, err)
					continue
				}
				if !sameJSON(t, out, []byte(want)) {
					t.Errorf("%s: %s:\ngot  %s\nshown %s", path, params, out, want)
				}
				var m map[string]any
				if json.Unmarshal(out, &m) == nil {
					if s, ok := m["text"].(string); ok {
						lastText = &s
					}
				}
			case "Error:":
				var ge *guest.Error
				if !errors.As(err, &ge) {
					t.Errorf("%s: %s: got %v, shown a tool error", path, params, err)
					continue
				}
				got, _ := json.Marshal(map[string]any{"code": ge.Code, "message": ge.Message, "retryable": ge.Retryable})
				if !sameJSON(t, got, []byte(want)) {
					t.Errorf("%s: %s:\ngot  %s\nshown %s", path, params, got, want)
				}
			default:
				t.Fatalf("%s: %q after parameters, want Result: or Error:", path, kind)
			}
		case "Text:":
			var text string
			text, i = block(i + 1)
			i--
			if lastText == nil {
				t.Fatalf("%s: Text: without a result text before it", path)
			}
			if text != *lastText {
				t.Errorf("%s: text shown\n%s\ngot\n%s", path, text, *lastText)
			}
		}
	}
	if examples == 0 {
		t.Errorf("%s: no examples", path)
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	da, err := wire.Decode(a, wire.Limits{})
	if err != nil {
		t.Errorf("not JSON: %s", a)
		return false
	}
	db, err := wire.Decode(b, wire.Limits{})
	if err != nil {
		t.Errorf("not JSON: %s", b)
		return false
	}
	ca, _ := wire.Encode(da, wire.Limits{})
	cb, _ := wire.Encode(db, wire.Limits{})
	return bytes.Equal(ca, cb)
}
