package tooldef_test

import (
	"slices"
	"testing"

	"github.com/toolhost/toolhost/internal/tooldef"
)

// CheckPlatform's job rules read the run route: without one (routed
// false, a descriptor that contracts refuses for its shape) they do not
// apply; the other rules do.
func TestCheckPlatformRouted(t *testing.T) {
	job := tooldef.DefaultPlatform()
	job.Execution, job.QuotaClass = tooldef.ExecutionJob, "tools-free"
	tests := []struct {
		name   string
		p      tooldef.Platform
		routed bool
		want   []string
	}{
		{name: "the defaults", p: tooldef.DefaultPlatform(), routed: true},
		{name: "a job tool without a job", p: job, routed: true,
			want: []string{tooldef.FindingJobMissing, tooldef.FindingQuotaClassTier}},
		{name: "without a run route", p: job, routed: false, want: []string{tooldef.FindingQuotaClassTier}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range tooldef.CheckPlatform(tt.p, tt.routed) {
				got = append(got, f.Code)
				if f.Path == "" || f.Path[0] != '/' || f.Detail == "" {
					t.Errorf("finding %+v: no descriptor path or no detail", f)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("findings %v, want %v", got, tt.want)
			}
		})
	}
}
