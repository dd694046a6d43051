package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"

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

// printTable writes text, a line a row and a tab between cells, to w with
// its columns aligned.
func printTable(w io.Writer, text string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if _, err := io.WriteString(tw, text); err != nil {
		return err
	}
	return tw.Flush()
}

// closeReporting calls close (a deferred Close) and, when the command had
// no error, makes close's the command's: a store, a log or a connection
// that fails to close may not have finished what the command asked of it.
func closeReporting(err *error, close func() error) {
	if cerr := close(); cerr != nil && *err == nil {
		*err = cerr
	}
}

// closeLogging calls close (a deferred Close) and logs its error, for a
// command whose answer is made already: releasing what it used does not
// change it.
func closeLogging(log *slog.Logger, what string, close func() error) {
	if err := close(); err != nil {
		log.Warn("closing "+what, "error", err)
	}
}

// complain writes a message for the operator to stderr. A write to stderr
// that fails has nowhere left to be reported.
func complain(stderr io.Writer, format string, args ...any) {
	fmt.Fprintf(stderr, format, args...) //nolint:errcheck // see above
}
