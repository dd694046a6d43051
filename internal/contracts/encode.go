package contracts

import (
	"bytes"
	"encoding/json"
)

// AppendJSON appends the run document's JSON to b: byte for byte what
// encoding/json writes for it with HTML escaping off (json.Encoder with
// SetEscapeHTML(false), less its final newline), which the run route
// answered with before; TestRunAppendJSON holds the two to the same bytes.
// The answer of every sync run is encoded with it. The common document —
// an id, a tool, a status, a json.RawMessage result or an error — is
// written by hand (the error through encoding/json); any other (a result
// of another type, a job, files) is encoded by encoding/json whole.
func (r *Run) AppendJSON(b []byte) ([]byte, error) {
	raw, isRaw := r.Result.(json.RawMessage)
	if r.Job != nil || r.Files != nil || (r.Result != nil && (!isRaw || len(raw) == 0)) {
		return appendStd(b, r)
	}
	var err error
	for _, f := range [...]struct{ name, value string }{
		{`{"id":`, r.ID},
		{`,"tool":`, r.Tool},
		{`,"status":`, string(r.Status)},
	} {
		b = append(b, f.name...)
		if b, err = appendString(b, f.value); err != nil {
			return b, err
		}
	}
	if r.Result != nil {
		b = append(b, `,"result":`...)
		// encoding/json compacts a RawMessage (and refuses an invalid one).
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, raw); err != nil {
			return b, err
		}
		b = buf.Bytes()
	}
	if r.Error != nil {
		b = append(b, `,"error":`...)
		if b, err = appendStd(b, r.Error); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendString appends s as a JSON string: directly when it is printable
// ASCII without a quote or a backslash (identifiers, hex ids), else as
// encoding/json escapes it. (executor's encoder has the same helper.)
func appendString(b []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return appendStd(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), nil
}

// appendStd appends v as encoding/json writes it without HTML escaping.
func appendStd(b []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
