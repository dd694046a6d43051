package contracts

import (
	"bytes"
	"encoding/json"

	"github.com/toolhost/toolhost/internal/wire"
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
		return wire.AppendJSON(b, r)
	}
	var err error
	for _, f := range [...]struct{ name, value string }{
		{`{"id":`, r.ID},
		{`,"tool":`, r.Tool},
		{`,"status":`, string(r.Status)},
	} {
		b = append(b, f.name...)
		if b, err = wire.AppendString(b, f.value); err != nil {
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
		if b, err = wire.AppendJSON(b, r.Error); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}
