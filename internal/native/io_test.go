package native_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// probeInput is an input type as the native packages write them.
type probeInput struct {
	Operation string `json:"operation"`
	Host      string `json:"host"`
	Count     *int   `json:"count,omitempty"`
}

func (in *probeInput) SelectedOperation() string { return in.Operation }

func TestDecodeParameters(t *testing.T) {
	for _, tt := range []struct {
		name       string
		parameters string
		message    string // the refusal's message; empty: decoded
	}{
		{name: "valid", parameters: `{"operation":"probe","host":"example.org","count":3}`},
		{name: "optional member absent", parameters: `{"operation":"probe","host":"example.org"}`},
		{name: "unknown member", parameters: `{"operation":"probe","host":"example.org","port":1}`, message: "the parameters do not match the input schema"},
		{name: "trailing document", parameters: `{"operation":"probe","host":"a"} {}`, message: "the parameters do not match the input schema"},
		{name: "wrong type", parameters: `{"operation":"probe","host":1}`, message: "the parameters do not match the input schema"},
		{name: "not JSON", parameters: `{"operation":`, message: "the parameters do not match the input schema"},
		{name: "empty", parameters: ``, message: "the parameters do not match the input schema"},
		{name: "another operation", parameters: `{"operation":"scan","host":"example.org"}`, message: "the parameters name another operation"},
		{name: "no operation", parameters: `{"host":"example.org"}`, message: "the parameters name another operation"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var in probeInput
			err := native.Call{ToolCode: "probe", Operation: "probe", Parameters: []byte(tt.parameters)}.DecodeParameters(&in)
			if tt.message == "" {
				if err != nil {
					t.Fatalf("DecodeParameters = %v; want nil", err)
				}
				if in.Operation != "probe" || in.Host != "example.org" {
					t.Errorf("decoded %+v", in)
				}
				return
			}
			checkRefusal(t, err, toolerr.InvalidParameters, tt.message)
		})
	}
}

func TestEncodeResult(t *testing.T) {
	type result struct {
		Location string `json:"location"`
		Count    int    `json:"count"`
	}
	v := result{Location: "https://example.org/?a=1&b=<2>", Count: 7}
	const want = `{"location":"https://example.org/?a=1&b=<2>","count":7}`
	for _, tt := range []struct {
		name     string
		maxBytes int
		refused  bool
	}{
		{name: "no cap", maxBytes: 0},
		{name: "under the cap", maxBytes: len(want) + 1},
		{name: "at the cap", maxBytes: len(want)},
		{name: "over the cap", maxBytes: len(want) - 1, refused: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := native.EncodeResult(v, tt.maxBytes)
			if tt.refused {
				checkRefusal(t, err, toolerr.OutputLimitExceeded, fmt.Sprintf("the result takes %d bytes; the limit is %d", len(want), tt.maxBytes))
				return
			}
			if err != nil || string(b) != want {
				t.Errorf("EncodeResult = %s, %v; want %s", b, err, want)
			}
		})
	}
	t.Run("unencodable", func(t *testing.T) {
		_, err := native.EncodeResult(math.NaN(), 0)
		var te *toolerr.Error
		if err == nil || errors.As(err, &te) {
			t.Errorf("EncodeResult(NaN) = %v; want an encoding error that is not a tool error", err)
		}
	})
}

func TestRefuse(t *testing.T) {
	checkRefusal(t, native.Refuse(toolerr.ExecutionFailed, "%s exited with status %d", "qpdf", 2), toolerr.ExecutionFailed, "qpdf exited with status 2")
	long := native.Refuse(toolerr.InvalidParameters, "%s", strings.Repeat("é", guest.MaxMessageBytes))
	if len(long.Message) != guest.MaxMessageBytes || strings.Trim(long.Message, "é") != "" {
		t.Errorf("a long message is %d bytes, %q…; want %d bytes of é", len(long.Message), long.Message[:8], guest.MaxMessageBytes)
	}
}

func TestClip(t *testing.T) {
	for _, tt := range []struct {
		name string
		s    string
		n    int
		want string
	}{
		{name: "short", s: "abc", n: 8, want: "abc"},
		{name: "exact", s: "abc", n: 3, want: "abc"},
		{name: "ascii cut", s: "abcdef", n: 4, want: "abcd"},
		{name: "on a boundary", s: "aéb", n: 3, want: "aé"},
		{name: "inside a character", s: "aéb", n: 2, want: "a"},
		{name: "inside a four-byte character", s: "a😀", n: 4, want: "a"},
		{name: "zero", s: "abc", n: 0, want: ""},
		{name: "invalid bytes replaced", s: "a\xff\xfeb", n: 16, want: "a\uFFFDb"},
		{name: "replacement cut", s: "a\xffb", n: 3, want: "a"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := native.Clip(tt.s, tt.n); got != tt.want {
				t.Errorf("Clip(%q, %d) = %q; want %q", tt.s, tt.n, got, tt.want)
			}
		})
	}
}

// checkRefusal fails t unless err is a not-retryable tool error with code
// and message.
func checkRefusal(t *testing.T, err error, code toolerr.Code, message string) {
	t.Helper()
	var te *toolerr.Error
	if !errors.As(err, &te) {
		t.Fatalf("err = %v; want a tool error", err)
	}
	if te.Code != code || te.Retryable || te.Message != message || len(te.Issues) != 0 {
		t.Errorf("err = %+v; want %s, not retryable, message %q", *te, code, message)
	}
}
