package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/unixtime"
)

// unixTimeInput is the unix_time service's parameters.
type unixTimeInput struct {
	Operation string  `json:"operation" doc:"to_rfc3339: a Unix timestamp to a date-time. from_rfc3339: a date-time to Unix time."`
	Timestamp int64   `json:"timestamp" ops:"to_rfc3339" doc:"The instant, in unit since 1970-01-01T00:00:00Z; negative is before it. The instant must fall in the years 0000 to 9999."`
	Unit      *string `json:"unit,omitempty" ops:"to_rfc3339" enum:"s,ms,us,ns" default:"s" doc:"The unit of timestamp: seconds, milliseconds, microseconds or nanoseconds."`
	Offset    *string `json:"offset,omitempty" ops:"to_rfc3339" maxLength:"6" pattern:"^(Z|[+-][0-9][0-9]:[0-9][0-9])$" default:"Z" doc:"The fixed UTC offset to write the date-time at: Z or +HH:MM / -HH:MM (hours up to 23). Zone names (Europe/Rome) are not accepted: there is no zone database in the module."`
	Text      string  `json:"text" ops:"from_rfc3339" maxLength:"64" doc:"An RFC 3339 date-time with its offset: 2006-01-02T15:04:05Z, 2006-01-02T15:04:05.123+02:00."`
}

// unixTimeOutput is its result.
type unixTimeOutput struct {
	Text         string `json:"text" ops:"to_rfc3339" doc:"The RFC 3339 date-time, with as many fraction digits as the instant needs."`
	Seconds      int64  `json:"seconds" ops:"from_rfc3339" doc:"Whole seconds since the epoch, rounded down."`
	Milliseconds int64  `json:"milliseconds" ops:"from_rfc3339" doc:"Whole milliseconds since the epoch, rounded down."`
	Nanosecond   int    `json:"nanosecond" ops:"from_rfc3339" doc:"The nanoseconds within the second, 0 to 999999999."`
	UTC          string `json:"utc" ops:"from_rfc3339" doc:"The same instant in RFC 3339 at Z."`
}

func computeUnixTime(ctx *guest.Context, in unixTimeInput) (unixTimeOutput, error) {
	invalid := map[error]string{
		unixtime.ErrUnit:   "unknown unit",
		unixtime.ErrOffset: "offset must be Z or +HH:MM / -HH:MM with hours 00-23 and minutes 00-59",
		unixtime.ErrRange:  "the instant is outside the years 0000 to 9999 that RFC 3339 can write",
		unixtime.ErrLayout: "text is not an RFC 3339 date-time such as 2006-01-02T15:04:05Z or 2006-01-02T15:04:05.5+02:00",
	}
	switch in.Operation {
	case "to_rfc3339":
		s, err := unixtime.Format(in.Timestamp, unixtime.Unit(bundled.String(in.Unit, "s")), bundled.String(in.Offset, "Z"))
		return unixTimeOutput{Text: s}, bundled.ToolError(err, invalid)
	case "from_rfc3339":
		t, err := unixtime.Parse(in.Text)
		if err != nil {
			return unixTimeOutput{}, bundled.ToolError(err, invalid)
		}
		return unixTimeOutput{Seconds: t.Seconds, Milliseconds: t.Milliseconds, Nanosecond: t.Nanosecond, UTC: t.UTC}, nil
	}
	return unixTimeOutput{}, guest.Failed("unknown operation")
}
