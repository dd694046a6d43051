package native

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// Input is the input type of a native service, decoded from the
// parameters: SelectedOperation returns its "operation" member.
type Input interface{ SelectedOperation() string }

// DecodeParameters decodes the call's parameters document into v,
// refusing unknown fields, trailing data and an operation other than the
// call's with a not-retryable invalid_parameters. The worker has validated
// the document against the input schema, so a refusal here means the
// schema and v's Go type disagree.
func (c Call) DecodeParameters(v Input) error {
	dec := json.NewDecoder(bytes.NewReader(c.Parameters))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil || dec.More() {
		return Refuse(toolerr.InvalidParameters, "the parameters do not match the input schema")
	}
	if v.SelectedOperation() != c.Operation {
		return Refuse(toolerr.InvalidParameters, "the parameters name another operation")
	}
	return nil
}

// EncodeResult encodes a result document without HTML escaping and without
// a trailing newline. When maxBytes is positive, a document over maxBytes
// is refused with output_limit_exceeded and a message giving both sizes:
// the worker would refuse it too, but without saying why. A maxBytes of 0
// leaves the bound to the worker alone.
func EncodeResult(v any, maxBytes int) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding the result: %w", err)
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if maxBytes > 0 && len(b) > maxBytes {
		return nil, Refuse(toolerr.OutputLimitExceeded, "the result takes %d bytes; the limit is %d", len(b), maxBytes)
	}
	return b, nil
}

// Refuse returns a tool error with code c, not retryable, whose message is
// format and args cut by Clip to guest.MaxMessageBytes. The caller sees the
// message: give positions, counts and short reasons, never submitted
// values.
func Refuse(c toolerr.Code, format string, args ...any) *toolerr.Error {
	e := toolerr.Raised(c, false)
	e.Message = Clip(fmt.Sprintf(format, args...), guest.MaxMessageBytes)
	return e
}

// Clip returns s as valid UTF-8, each run of invalid bytes replaced by
// U+FFFD, cut to at most n bytes without splitting a character.
func Clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
