package tooldef_test

import (
	"reflect"
	"testing"

	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/toolerr"
)

func TestCheckPins(t *testing.T) {
	d := &tooldef.Definition{ContractVersion: "1.0.0", ImplementationVersion: "1.2.0", Fingerprint: "f00d"}
	for _, tt := range []struct {
		name                                  string
		contract, implementation, fingerprint string
		stale                                 []string // the issue paths, in order; none: nil
	}{
		{name: "current", contract: "1.0.0", implementation: "1.2.0", fingerprint: "f00d"},
		{name: "contract", contract: "1.1.0", implementation: "1.2.0", fingerprint: "f00d", stale: []string{"contract_version"}},
		{name: "implementation", contract: "1.0.0", implementation: "1.3.0", fingerprint: "f00d", stale: []string{"implementation_version"}},
		{name: "fingerprint", contract: "1.0.0", implementation: "1.2.0", fingerprint: "beef", stale: []string{"schema_fingerprint"}},
		{name: "contract and fingerprint", contract: "2.0.0", implementation: "1.2.0", fingerprint: "", stale: []string{"contract_version", "schema_fingerprint"}},
		{name: "all empty", stale: []string{"contract_version", "implementation_version", "schema_fingerprint"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := d.CheckPins(tt.contract, tt.implementation, tt.fingerprint)
			if tt.stale == nil {
				if got != nil {
					t.Fatalf("CheckPins = %+v; want nil", *got)
				}
				return
			}
			var issues []toolerr.Issue
			for _, p := range tt.stale {
				issues = append(issues, toolerr.Issue{Code: "mismatch", Path: []string{p}})
			}
			want := &toolerr.Error{Code: toolerr.VersionMismatch, Retryable: true, Issues: issues, IssueCount: len(issues)}
			if got == nil {
				t.Fatalf("CheckPins = nil; want %+v", *want)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("CheckPins = %+v; want %+v", *got, *want)
			}
		})
	}
}
