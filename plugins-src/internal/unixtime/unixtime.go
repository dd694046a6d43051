// Package unixtime converts given instants between Unix time (seconds,
// milliseconds, microseconds or nanoseconds since 1970-01-01T00:00:00Z)
// and RFC 3339 date-times. It never reads a clock.
//
// Time zones are fixed offsets (Z, +02:00, -05:30) only. A WebAssembly
// module on wasip1 has no zoneinfo database to read, and embedding
// time/tzdata would add about 450 KB to the module and make a result depend
// on the tzdata version the module was built with, so the same item could
// give different answers on two builds: the caller who knows the zone's
// offset at that instant passes it.
package unixtime

import (
	"errors"
	"time"
)

// Unit is the unit of a Unix timestamp; its values are the service's.
type Unit string

// The units.
const (
	Seconds      Unit = "s"
	Milliseconds Unit = "ms"
	Microseconds Unit = "us"
	Nanoseconds  Unit = "ns"
)

// The instants RFC 3339 can write: years 0000 to 9999 (§5.6, date-fullyear
// is four digits).
const (
	minSeconds = -62167219200 // 0000-01-01T00:00:00Z
	maxSeconds = 253402300799 // 9999-12-31T23:59:59Z
)

var (
	// ErrUnit is returned for a unit the package does not know.
	ErrUnit = errors.New("unixtime: unknown unit")
	// ErrOffset is returned for an offset that is not Z or ±HH:MM.
	ErrOffset = errors.New("unixtime: offset is not Z or +HH:MM / -HH:MM")
	// ErrRange is returned for an instant outside the years 0000–9999.
	ErrRange = errors.New("unixtime: instant outside the years 0000 to 9999")
	// ErrLayout is returned for text that is not an RFC 3339 date-time.
	ErrLayout = errors.New("unixtime: not an RFC 3339 date-time")
)

// perSecond returns how many of unit u make a second.
func perSecond(u Unit) (int64, error) {
	switch u {
	case Seconds:
		return 1, nil
	case Milliseconds:
		return 1e3, nil
	case Microseconds:
		return 1e6, nil
	case Nanoseconds:
		return 1e9, nil
	}
	return 0, ErrUnit
}

// Zone returns the fixed zone that offset names: "Z" (or "+00:00") is UTC,
// "+HH:MM" and "-HH:MM" are east and west of it, hours 00–23, minutes 00–59.
func Zone(offset string) (*time.Location, error) {
	if offset == "Z" {
		return time.UTC, nil
	}
	if len(offset) != 6 || offset[0] != '+' && offset[0] != '-' || offset[3] != ':' {
		return nil, ErrOffset
	}
	two := func(s string) int {
		if s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
			return -1
		}
		return int(s[0]-'0')*10 + int(s[1]-'0')
	}
	h, m := two(offset[1:3]), two(offset[4:6])
	if h < 0 || h > 23 || m < 0 || m > 59 {
		return nil, ErrOffset
	}
	secs := (h*60 + m) * 60
	if offset[0] == '-' {
		secs = -secs
	}
	if secs == 0 {
		return time.UTC, nil
	}
	return time.FixedZone(offset, secs), nil
}

// Format writes the instant value (in unit u since the epoch) as an
// RFC 3339 date-time at the fixed offset, with as many fraction digits as
// the instant needs (none for a whole second).
func Format(value int64, u Unit, offset string) (string, error) {
	per, err := perSecond(u)
	if err != nil {
		return "", err
	}
	zone, err := Zone(offset)
	if err != nil {
		return "", err
	}
	sec, frac := value/per, value%per
	if frac < 0 {
		sec, frac = sec-1, frac+per
	}
	if sec < minSeconds || sec > maxSeconds {
		return "", ErrRange
	}
	t := time.Unix(sec, frac*(1e9/per)).In(zone)
	if y := t.Year(); y < 0 || y > 9999 {
		return "", ErrRange
	}
	return t.Format(time.RFC3339Nano), nil
}

// Instant is a parsed date-time as Unix time.
type Instant struct {
	Seconds      int64  // whole seconds since the epoch, rounded down
	Milliseconds int64  // whole milliseconds since the epoch, rounded down
	Nanosecond   int    // nanoseconds within the second, 0–999,999,999
	UTC          string // the instant in RFC 3339 at Z
}

// Parse reads an RFC 3339 date-time ("2006-01-02T15:04:05Z",
// "2006-01-02T15:04:05.999+02:00"); a leap second (:60) is refused, since
// Unix time has none.
func Parse(text string) (Instant, error) {
	t, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return Instant{}, ErrLayout
	}
	return Instant{
		Seconds:      t.Unix(),
		Milliseconds: t.UnixMilli(),
		Nanosecond:   t.Nanosecond(),
		UTC:          t.UTC().Format(time.RFC3339Nano),
	}, nil
}
