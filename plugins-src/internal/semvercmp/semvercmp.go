// Package semvercmp compares semantic versions (SemVer 2.0.0 §11's
// precedence) and matches them against ranges ("^1.2", "~1.2.3",
// ">= 1.0, < 2", "1.x || 2.1 - 2.4"), with github.com/Masterminds/semver/v3.
//
// The library's errors quote the version or range they refuse, so they
// are not passed on: the caller gets a sentinel naming the parameter.
package semvercmp

import (
	"errors"

	"github.com/Masterminds/semver/v3"
)

var (
	// ErrA and ErrB are returned for a first or second version that is not
	// a semantic version.
	ErrA = errors.New("semvercmp: a is not a semantic version")
	ErrB = errors.New("semvercmp: b is not a semantic version")
	// ErrVersion is returned by Match for a version that is not one.
	ErrVersion = errors.New("semvercmp: version is not a semantic version")
	// ErrRange is returned for a range the library cannot read.
	ErrRange = errors.New("semvercmp: range is not a version range")
)

// parse reads s strictly (SemVer 2.0.0 exactly: MAJOR.MINOR.PATCH, an
// optional -pre-release and +build) or, unless strict, as the library's
// NewVersion does: a leading "v", and a missing minor or patch as 0.
func parse(s string, strict bool) (*semver.Version, error) {
	if strict {
		return semver.StrictNewVersion(s)
	}
	return semver.NewVersion(s)
}

// Compare returns -1, 0 or 1 as a precedes, equals or follows b, and both
// written canonically (without a "v", with all three numbers). Build
// metadata does not count (§10): 1.0.0+a equals 1.0.0+b.
func Compare(a, b string, strict bool) (int, string, string, error) {
	va, err := parse(a, strict)
	if err != nil {
		return 0, "", "", ErrA
	}
	vb, err := parse(b, strict)
	if err != nil {
		return 0, "", "", ErrB
	}
	return va.Compare(vb), va.String(), vb.String(), nil
}

// Match reports whether version is in the range, and returns version
// written canonically. A pre-release version is in a range only when
// includePrerelease is set or the range's comparator group names a
// pre-release itself (the library's rule, as npm's).
func Match(version, rng string, strict, includePrerelease bool) (bool, string, error) {
	v, err := parse(version, strict)
	if err != nil {
		return false, "", ErrVersion
	}
	c, err := semver.NewConstraint(rng)
	if err != nil {
		return false, "", ErrRange
	}
	c.IncludePrerelease = includePrerelease
	return c.Check(v), v.String(), nil
}
