package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/semvercmp"
)

// semverInput is the semver service's parameters.
type semverInput struct {
	Operation         string `json:"operation" doc:"compare: which of a and b comes first (SemVer 2.0.0 precedence). match: whether version is in range."`
	A                 string `json:"a" ops:"compare" maxLength:"128" doc:"The first version."`
	B                 string `json:"b" ops:"compare" maxLength:"128" doc:"The second version."`
	Version           string `json:"version" ops:"match" maxLength:"128" doc:"The version to test."`
	Range             string `json:"range" ops:"match" maxLength:"512" doc:"A range: comparators (=, !=, >, >=, <, <=), ^ and ~, x or * wildcards, hyphen ranges (1.2 - 1.4.5), joined by spaces or commas (and) and || (or)."`
	Strict            *bool  `json:"strict,omitempty" default:"false" doc:"true: versions must be SemVer 2.0.0 exactly (MAJOR.MINOR.PATCH). false: a leading v and a missing minor or patch (v1.2) are accepted."`
	IncludePrerelease *bool  `json:"include_prerelease,omitempty" ops:"match" default:"false" doc:"Whether a pre-release version (1.2.4-beta) can match a range that names no pre-release."`
}

// semverOutput is its result.
type semverOutput struct {
	Comparison int    `json:"comparison" ops:"compare" minimum:"-1" maximum:"1" doc:"-1 when a precedes b, 0 when they are equal (build metadata does not count), 1 when a follows b."`
	A          string `json:"a" ops:"compare" doc:"a, canonical."`
	B          string `json:"b" ops:"compare" doc:"b, canonical."`
	Matches    bool   `json:"matches" ops:"match" doc:"Whether version is in range."`
	Version    string `json:"version" ops:"match" doc:"version, canonical."`
}

func computeSemver(ctx *guest.Context, in semverInput) (semverOutput, error) {
	invalid := map[error]string{
		semvercmp.ErrA:       "a is not a semantic version",
		semvercmp.ErrB:       "b is not a semantic version",
		semvercmp.ErrVersion: "version is not a semantic version",
		semvercmp.ErrRange:   "range is not a version range",
	}
	strict := bundled.Bool(in.Strict, false)
	switch in.Operation {
	case "compare":
		c, a, b, err := semvercmp.Compare(in.A, in.B, strict)
		return semverOutput{Comparison: c, A: a, B: b}, bundled.ToolError(err, invalid)
	case "match":
		ok, v, err := semvercmp.Match(in.Version, in.Range, strict, bundled.Bool(in.IncludePrerelease, false))
		return semverOutput{Matches: ok, Version: v}, bundled.ToolError(err, invalid)
	}
	return semverOutput{}, guest.Failed("unknown operation")
}
