package api_test

import (
	"testing"

	"github.com/toolhost/toolhost/internal/api"
)

// TestParseDeprecation: the --deprecation setting's forms (issue 16, item
// 17): ADR-027's true by default, RFC 9745's @<unix seconds> otherwise.
func TestParseDeprecation(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		bad            bool
	}{
		{name: "empty", in: "", want: "true"},
		{name: "true", in: "true", want: "true"},
		{name: "rfc9745", in: "rfc9745", want: "@1790121600"},
		{name: "seconds", in: "@1700000000", want: "@1700000000"},
		{name: "date", in: "2026-09-23", want: "@1790121600"},
		{name: "rfc3339", in: "2026-09-23T00:00:10Z", want: "@1790121610"},
		{name: "negative", in: "@-1", bad: true},
		{name: "word", in: "yes", bad: true},
		{name: "http date", in: "Wed, 23 Sep 2026 00:00:00 GMT", bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := api.ParseDeprecation(tc.in)
			if tc.bad {
				if err == nil {
					t.Errorf("ParseDeprecation(%q) = %q, want an error", tc.in, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ParseDeprecation(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}
