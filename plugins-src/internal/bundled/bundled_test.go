package bundled

import (
	"errors"
	"fmt"
	"testing"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/textpos"
)

var errSentinel = errors.New("sentinel")

func TestToolError(t *testing.T) {
	pos := textpos.New("ab", 1, "text is not valid X", "bad")
	tests := []struct {
		name    string
		err     error
		code    string
		message string
	}{
		{name: "positioned", err: pos, code: guest.CodeInvalidParameters, message: "text is not valid X: bad at line 1, column 2 (byte 1)"},
		{name: "wrapped positioned", err: fmt.Errorf("formatting: %w", pos), code: guest.CodeInvalidParameters, message: "text is not valid X: bad at line 1, column 2 (byte 1)"},
		{name: "listed sentinel", err: fmt.Errorf("x: %w", errSentinel), code: guest.CodeInvalidParameters, message: "listed"},
		{name: "guest error", err: guest.InvalidInput("own"), code: guest.CodeInvalidParameters, message: "own"},
		{name: "other", err: errors.New("boom"), code: guest.CodeExecutionFailed, message: "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ge *guest.Error
			if !errors.As(ToolError(tt.err, map[error]string{errSentinel: "listed"}), &ge) {
				t.Fatal("not a *guest.Error")
			}
			if ge.Code != tt.code || ge.Message != tt.message {
				t.Errorf("got %s %q, want %s %q", ge.Code, ge.Message, tt.code, tt.message)
			}
		})
	}
	if ToolError(nil, nil) != nil {
		t.Error("ToolError(nil) != nil")
	}
}

func TestDefaults(t *testing.T) {
	i, b, s := 4, false, "x"
	if Int(nil, 2) != 2 || Int(&i, 2) != 4 || Bool(nil, true) != true || Bool(&b, true) != false || String(nil, "-") != "-" || String(&s, "-") != "x" {
		t.Error("defaults wrong")
	}
}
