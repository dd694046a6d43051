package wire

import (
	"bytes"
	"encoding/json"
)

// The appenders of the hand-written encoders (the compute answer in
// internal/api, tools.run@1 in internal/contracts): each writes the bytes
// encoding/json writes with HTML escaping off, without its newline.

// AppendString appends s as a JSON string: directly when it is printable
// ASCII without a quote or a backslash (identifiers, versions, hex ids),
// else as encoding/json escapes it.
func AppendString(b []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return AppendJSON(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), nil
}

// AppendJSON appends v as encoding/json encodes it with HTML escaping off;
// on an error b is returned as it was.
func AppendJSON(b []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
