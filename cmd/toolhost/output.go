package main

import (
	"encoding/json"
	"io"

	"github.com/toolhost/toolhost/internal/wire"
)

// printCanonical writes v as one line of canonical JSON. v is marshalled
// with encoding/json first (for struct tags), then re-encoded canonically.
func printCanonical(w io.Writer, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	doc, err := wire.Decode(raw, wire.Limits{})
	if err != nil {
		return err
	}
	out, err := wire.Encode(doc, wire.Limits{})
	if err != nil {
		return err
	}
	_, err = w.Write(append(out, '\n'))
	return err
}
