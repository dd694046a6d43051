// Package uuidinfo reads UUIDs (RFC 9562) — version, variant, and the
// instant a time-based one holds — and makes the name-based versions 3 (MD5)
// and 5 (SHA-1) from a namespace and a name, with github.com/google/uuid.
// Nothing here is random or reads a clock: versions 1, 4, 6 and 7 are
// inspected, never generated.
package uuidinfo

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/google/uuid"
)

var (
	// ErrUUID is returned for text that is not a UUID. The library's own
	// errors quote the text, so they are not passed on.
	ErrUUID = errors.New("uuidinfo: not a UUID")
	// ErrNamespace is returned for a namespace that is neither a
	// predefined name nor a UUID.
	ErrNamespace = errors.New("uuidinfo: unknown namespace")
	// ErrVersion is returned for a name-based version other than 3 and 5.
	ErrVersion = errors.New("uuidinfo: name-based versions are 3 and 5")
)

// Info describes a UUID.
type Info struct {
	UUID    string // canonical: 36 lower-case characters
	URN     string // urn:uuid:…, RFC 9562 §4
	Version int    // the 4 version bits, 0–15; meaningful for the RFC 9562 variant
	// Variant is rfc9562 (the variant of RFC 4122 and 9562, bits 10x),
	// ncs (0xx, NCS backward compatibility), microsoft (110) or future
	// (111, reserved).
	Variant string
	// Time is the instant a version 1, 6 or 7 UUID of the RFC 9562 variant
	// holds, in RFC 3339 at Z (100 ns precision for 1 and 6, 1 ms for 7);
	// empty otherwise.
	Time string
	// Special is "nil" for the Nil UUID (all zeros, §5.9) and "max" for the
	// Max UUID (all ones, §5.10); empty otherwise.
	Special string
}

// Parse reads a UUID in any of the forms the library accepts: the 36
// characters 8-4-4-4-12 of either case, the same in braces, with the
// urn:uuid: prefix, or 32 hex digits without hyphens.
func Parse(s string) (uuid.UUID, error) {
	u, err := uuid.Parse(s)
	if err != nil {
		return uuid.UUID{}, ErrUUID
	}
	return u, nil
}

// Inspect returns the Info of the UUID s.
func Inspect(s string) (Info, error) {
	u, err := Parse(s)
	if err != nil {
		return Info{}, err
	}
	in := Info{UUID: u.String(), URN: u.URN(), Version: int(u.Version())}
	switch u.Variant() {
	case uuid.RFC4122:
		in.Variant = "rfc9562"
	case uuid.Microsoft:
		in.Variant = "microsoft"
	case uuid.Future:
		in.Variant = "future"
	default:
		in.Variant = "ncs"
	}
	switch u {
	case uuid.Nil:
		in.Special = "nil"
	case uuid.Max:
		in.Special = "max"
	}
	if in.Variant == "rfc9562" && (in.Version == 1 || in.Version == 6 || in.Version == 7) {
		t := u.Time()
		if in.Version == 6 {
			// google/uuid v1.6.0 reads a version 6 timestamp as the first
			// 64 bits with the version nibble left in place; RFC 9562 §5.6
			// has time_high (32 bits) and time_mid (16), the version, then
			// time_low (12).
			b := binary.BigEndian.Uint64(u[:8])
			t = uuid.Time(b>>16<<12 | b&0xfff)
		}
		sec, nsec := t.UnixTime()
		in.Time = time.Unix(sec, nsec).UTC().Format(time.RFC3339Nano)
	}
	return in, nil
}

// Namespace returns the namespace named by s: dns, url, oid or x500 (RFC
// 9562 §6.6), or a UUID.
func Namespace(s string) (uuid.UUID, error) {
	switch s {
	case "dns":
		return uuid.NameSpaceDNS, nil
	case "url":
		return uuid.NameSpaceURL, nil
	case "oid":
		return uuid.NameSpaceOID, nil
	case "x500":
		return uuid.NameSpaceX500, nil
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return uuid.UUID{}, ErrNamespace
	}
	return u, nil
}

// NameBased returns the version 3 or 5 UUID of name's UTF-8 bytes in the
// namespace ns.
func NameBased(version int, ns, name string) (string, error) {
	n, err := Namespace(ns)
	if err != nil {
		return "", err
	}
	switch version {
	case 3:
		return uuid.NewMD5(n, []byte(name)).String(), nil
	case 5:
		return uuid.NewSHA1(n, []byte(name)).String(), nil
	}
	return "", ErrVersion
}
