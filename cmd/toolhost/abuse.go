package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/toolhost/toolhost/internal/abuse"
	"github.com/toolhost/toolhost/internal/store"
)

// abuseRow is one abuse log row as `abuse list` prints it. A row stands
// for Count events of one key in one minute: Time is the first of them,
// LastAt the last (equal to Time for a single event), and the request ids
// are theirs, absent when unknown.
type abuseRow struct {
	ID        int64  `json:"id"`
	Time      string `json:"time"`
	LastAt    string `json:"last_at"`
	Count     int64  `json:"count"`
	Caller    string `json:"caller"`
	Principal string `json:"principal"`
	Tool      string `json:"tool"`
	Reason    string `json:"reason"`
	Reported  bool   `json:"reported"`
	// FirstRequestID and LastRequestID are the X-Request-Id of the
	// events at Time and LastAt.
	FirstRequestID string `json:"first_request_id,omitempty"`
	LastRequestID  string `json:"last_request_id,omitempty"`
}

// abuseTime is the format of the times `abuse list` prints: UTC, to the
// millisecond, as the log stores them.
const abuseTime = "2006-01-02T15:04:05.000Z"

// runAbuse is `abuse list [--since DURATION|RFC3339] [--data-dir DIR]`: the
// abuse log's rows, oldest first, one canonical JSON object a line, each
// with its count of events and the time of its last. Without
// --since it prints every row still kept (30 days). A missing database is an
// error, so that a mistyped --data-dir does not read as an empty log.
func runAbuse(args []string, stdout io.Writer) (err error) {
	if len(args) == 0 || args[0] != "list" {
		return fmt.Errorf("%w: abuse takes the subcommand list", errUsage)
	}
	fs := flag.NewFlagSet("abuse list", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := newOptions(fs)
	var df dataFlags
	df.register(o)
	sinceFlag := fs.String("since", "", "a `duration` back from now (90m, 24h, 7d) or an RFC 3339 time")
	if rest, err := o.parse(args[1:], false); err != nil || len(rest) != 0 {
		return usageOr(err, fmt.Errorf("%w: abuse list takes [--since DURATION|RFC3339] [--data-dir DIR]", errUsage))
	}
	now := time.Now()
	var since time.Time
	if *sinceFlag != "" {
		var err error
		if since, err = parseSince(*sinceFlag, now); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
	}

	path, local := df.database()
	if _, err := os.Stat(path); local && errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w at %s", errNoDatabase, path)
	}
	ctx := context.Background()
	s, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	defer closeReporting(&err, s.Close)
	log, err := abuse.New(abuse.Config{Store: s, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer closeReporting(&err, log.Close)
	rows, err := log.List(ctx, since, 0)
	if err != nil {
		return err
	}
	for _, r := range rows {
		out := abuseRow{
			ID:        r.ID,
			Time:      r.Time.UTC().Format(abuseTime),
			LastAt:    r.Last.UTC().Format(abuseTime),
			Count:     r.Count,
			Caller:    r.Caller,
			Principal: r.Principal,
			Tool:      r.Tool,
			Reason:    r.Reason,
			Reported:  r.Reported,

			FirstRequestID: r.FirstRequestID,
			LastRequestID:  r.LastRequestID,
		}
		if err := printCanonical(stdout, out); err != nil {
			return err
		}
	}
	return nil
}

// parseSince reads --since: an RFC 3339 time, or a non-negative Go duration
// back from now, which may also be a whole number of days ("7d").
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 100000 {
			return time.Time{}, fmt.Errorf("--since %q is not a duration or an RFC 3339 time", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil || d < 0 {
			return time.Time{}, fmt.Errorf("--since %q is not a duration or an RFC 3339 time", s)
		}
	}
	return now.Add(-d), nil
}
