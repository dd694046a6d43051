package tooldef_test

import (
	"reflect"
	"testing"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/tooldef"
)

// decodePlatform decodes the fixture with the platform block p (nil: none)
// and returns its service.
func decodePlatform(t *testing.T, p map[string]any) tooldef.Declared {
	t.Helper()
	doc := base(t)
	if p != nil {
		service(doc)["platform"] = p
	}
	pkg, err := tooldef.Decode(encode(t, doc), tooldef.Options{})
	if err != nil {
		t.Fatalf("Decode = %v; want a package", err)
	}
	return pkg.Services[0]
}

func TestPlatformDefaults(t *testing.T) {
	for _, tt := range []struct {
		name  string
		block map[string]any
	}{
		{name: "no block"},
		{name: "empty block", block: map[string]any{}},
		{name: "null fields", block: map[string]any{"status": nil, "job": nil, "hosts": nil, "cost": nil}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := decodePlatform(t, tt.block)
			if s.Refusal != nil {
				t.Fatal(s.Refusal)
			}
			if got, want := s.Definition.Platform, tooldef.DefaultPlatform(); !reflect.DeepEqual(got, want) {
				t.Errorf("platform %+v\nwant %+v", got, want)
			}
		})
	}
	p := tooldef.DefaultPlatform()
	if p.Execution != contracts.ExecutionClient || !p.API || !p.Anonymous || p.QuotaClass != "tools-run" || p.Cost != 1 ||
		p.Egress || p.Status != contracts.StatusStable {
		t.Errorf("defaults %+v", p)
	}
}

// The block is no part of the fingerprint: declaring one changes nothing
// of it.
func TestPlatformOutsideFingerprint(t *testing.T) {
	plain := decodePlatform(t, nil).Definition
	declared := decodePlatform(t, map[string]any{"execution": "sync", "quota_class": "tools-solve", "cost": 5}).Definition
	if plain.Fingerprint != declared.Fingerprint {
		t.Errorf("fingerprint %s, %s with a platform block", plain.Fingerprint, declared.Fingerprint)
	}
	want, err := schema.Fingerprint(declared.InputSchema, declared.OutputSchema, declared.OperationNames())
	if err != nil || declared.Fingerprint != want {
		t.Errorf("fingerprint %s, want %s (%v)", declared.Fingerprint, want, err)
	}
}

func TestPlatformDeclared(t *testing.T) {
	s := decodePlatform(t, map[string]any{
		"status":       "beta",
		"execution":    "job",
		"job":          map[string]any{"type": "finance", "operation": "plan", "preset": map[string]any{"max_orders": 4}},
		"legacy":       []any{map[string]any{"method": "POST", "path": "/api/process", "operation": "plan", "selector": "pac"}},
		"files":        []any{map[string]any{"name": "portfolio", "types": []any{"text/csv"}, "max_bytes": 65536}},
		"output_files": true,
		"anonymous":    false,
		"cost":         3,
		"egress":       true,
		"hosts":        []any{"quotes.example.org", "api.example.com"},
	})
	if s.Refusal != nil {
		t.Fatal(s.Refusal)
	}
	p := s.Definition.Platform
	want := tooldef.Platform{
		Status: contracts.StatusBeta, Execution: contracts.ExecutionJob, API: true,
		Job:         &contracts.RunJob{Type: "finance", Operation: "plan", Preset: p.Job.Preset},
		Legacy:      []contracts.LegacyRoute{{Method: "POST", Path: "/api/process", Operation: "plan", Selector: "pac"}},
		Files:       []contracts.FileInput{{Name: "portfolio", Types: []string{"text/csv"}, MaxBytes: 65536}},
		OutputFiles: true, Anonymous: false, QuotaClass: "tools-job", Cost: 3, Egress: true,
		Hosts: []string{"api.example.com", "quotes.example.org"},
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("platform %+v\nwant %+v", p, want)
	}
	if len(p.Job.Preset) != 1 {
		t.Errorf("preset %v", p.Job.Preset)
	}
}

func TestPlatformRefusals(t *testing.T) {
	probe := func(extra map[string]any) map[string]any {
		m := map[string]any{"execution": "sync", "egress": true, "anonymous": false, "capability": contracts.CapabilityProbe, "quota_class": contracts.QuotaClassProbe}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name   string
		block  any
		path   string
		detail string
		reason tooldef.Reason // default BadPlatform
	}{
		{name: "not an object", block: []any{}, path: "/services/0/platform", reason: tooldef.BadShape},
		{name: "unknown field", block: map[string]any{"tier": "free"}, path: "/services/0/platform/tier", detail: `unknown field "tier"`, reason: tooldef.BadShape},
		{name: "bad status", block: map[string]any{"status": "deprecated"}, path: "/services/0/platform/status"},
		{name: "bad execution", block: map[string]any{"execution": "batch"}, path: "/services/0/platform/execution"},
		{name: "api not a boolean", block: map[string]any{"api": "yes"}, path: "/services/0/platform/api", reason: tooldef.BadShape},
		{name: "unavailable without a reason", block: map[string]any{"status": "unavailable"},
			path: "/services/0/platform/status_reason", detail: tooldef.FindingStatusReasonMissing},
		{name: "reason without unavailable", block: map[string]any{"status_reason": "soon"},
			path: "/services/0/platform/status_reason", detail: tooldef.FindingStatusReasonUnexpected},
		{name: "job on a sync tool", block: map[string]any{"execution": "sync", "job": map[string]any{"type": "x", "operation": "plan"}},
			path: "/services/0/platform/job", detail: tooldef.FindingJobNotJobTool},
		{name: "job tool without a job", block: map[string]any{"execution": "job"},
			path: "/services/0/platform/job", detail: tooldef.FindingJobMissing},
		{name: "job of an unknown operation", block: map[string]any{"execution": "job", "job": map[string]any{"type": "x", "operation": "rebalance"}},
			path: "/services/0/platform/job/operation"},
		{name: "job preset sets tool", block: map[string]any{"execution": "job", "job": map[string]any{"type": "x", "operation": "plan", "preset": map[string]any{"tool": "value"}}},
			path: "/services/0/platform/job/preset", detail: tooldef.FindingJobPreset},
		{name: "job on a page-only tool", block: map[string]any{"execution": "job", "api": false, "job": map[string]any{"type": "x", "operation": "plan"}},
			path: "/services/0/platform/job"},
		{name: "legacy on a page-only tool", block: map[string]any{"api": false, "legacy": []any{map[string]any{"method": "GET", "path": "/api/dev/x"}}},
			path: "/services/0/platform/legacy"},
		{name: "legacy outside the legacy families", block: map[string]any{"legacy": []any{map[string]any{"method": "POST", "path": "/api/v1/tools/x/run"}}},
			path: "/services/0/platform/legacy/0/path"},
		{name: "legacy route twice", block: map[string]any{"legacy": []any{
			map[string]any{"method": "GET", "path": "/api/dev/x"}, map[string]any{"method": "GET", "path": "/api/dev/x"}}},
			path: "/services/0/platform/legacy/1"},
		{name: "file without types", block: map[string]any{"files": []any{map[string]any{"name": "file", "types": []any{}, "max_bytes": 1}}},
			path: "/services/0/platform/files/0/types"},
		{name: "file type not a media type", block: map[string]any{"files": []any{map[string]any{"name": "file", "types": []any{".pdf"}, "max_bytes": 1}}},
			path: "/services/0/platform/files/0/types/0"},
		{name: "file without a size", block: map[string]any{"files": []any{map[string]any{"name": "file", "types": []any{"application/pdf"}}}},
			path: "/services/0/platform/files/0/max_bytes"},
		{name: "file output from a sync tool", block: map[string]any{"execution": "sync", "output_files": true},
			path: "/services/0/platform/output_files", detail: tooldef.FindingFileOutputNotJob},
		{name: "anonymous egress without a throttle", block: map[string]any{"execution": "sync", "egress": true},
			path: "/services/0/platform/per_target_per_minute", detail: tooldef.FindingEgressUnthrottled},
		{name: "anonymous probe", block: probe(map[string]any{"anonymous": true, "per_target_per_minute": 6}),
			path: "/services/0/platform/anonymous", detail: tooldef.FindingProbeAnonymous},
		{name: "probe class without the capability", block: probe(map[string]any{"capability": nil}),
			path: "/services/0/platform/capability", detail: tooldef.FindingProbeCapability},
		{name: "client tool with egress", block: map[string]any{"egress": true, "anonymous": false},
			path: "/services/0/platform/egress", detail: tooldef.FindingClientFetches},
		{name: "client tool with hosts", block: map[string]any{"hosts": []any{"example.com"}},
			path: "/services/0/platform/hosts", detail: tooldef.FindingClientFetches},
		{name: "host not lower case", block: map[string]any{"execution": "sync", "egress": true, "anonymous": false, "hosts": []any{"Example.com"}},
			path: "/services/0/platform/hosts/0"},
		{name: "tier word in the quota class", block: map[string]any{"quota_class": "tools-free"},
			path: "/services/0/platform/quota_class", detail: tooldef.FindingQuotaClassTier},
		{name: "quota class not a class name", block: map[string]any{"quota_class": "Tools Run"},
			path: "/services/0/platform/quota_class"},
		{name: "cost zero", block: map[string]any{"cost": 0}, path: "/services/0/platform/cost"},
		{name: "cost fractional", block: map[string]any{"cost": 1.5}, path: "/services/0/platform/cost", reason: tooldef.BadShape},
		{name: "capability not a name", block: map[string]any{"capability": "probe"}, path: "/services/0/platform/capability"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := base(t)
			service(doc)["platform"] = tt.block
			pkg, err := tooldef.Decode(encode(t, doc), tooldef.Options{})
			if err != nil {
				t.Fatalf("Decode = %v; want a service refusal", err)
			}
			r := pkg.Services[0].Refusal
			if r == nil {
				t.Fatalf("accepted: %+v", pkg.Services[0].Definition.Platform)
			}
			wantReason := tt.reason
			if wantReason == "" {
				wantReason = tooldef.BadPlatform
			}
			if r.Reason != wantReason || r.Path != tt.path || (tt.detail != "" && r.Detail != tt.detail) {
				t.Errorf("refusal %v (detail %q); want %s at %s, detail %q", r, r.Detail, wantReason, tt.path, tt.detail)
			}
		})
	}
}

// A probe declared as ADR-027 wants it is accepted.
func TestPlatformProbe(t *testing.T) {
	s := decodePlatform(t, map[string]any{
		"execution": "sync", "egress": true, "anonymous": false,
		"capability": contracts.CapabilityProbe, "quota_class": contracts.QuotaClassProbe, "per_target_per_minute": 6,
		"legacy": []any{map[string]any{"method": "GET", "path": "/api/net/port/:target"}},
	})
	if s.Refusal != nil {
		t.Fatal(s.Refusal)
	}
	if p := s.Definition.Platform; p.Capability != contracts.CapabilityProbe || p.PerTargetPerMinute != 6 {
		t.Errorf("platform %+v", p)
	}
}
