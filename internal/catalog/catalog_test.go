package catalog_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolhost/toolhost/internal/catalog"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// allocator returns the PAC allocator's declared service from the
// repository's declaration fixture.
func allocator(t *testing.T) *tooldef.Definition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testkit.Root(), "testdata", "declarations", "allocator.json"))
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := tooldef.Decode(data, tooldef.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := pkg.Services[0].Definition
	if d == nil {
		t.Fatalf("fixture refused: %v", pkg.Services[0].Refusal)
	}
	return d
}

func effective(t *testing.T, p policy.Platform, d *tooldef.Definition) map[string]policy.Effective {
	t.Helper()
	m := map[string]policy.Effective{}
	for _, op := range d.Operations {
		e, err := policy.Clamp(p, op.Policy)
		if err != nil {
			t.Fatal(err)
		}
		m[op.Policy.Name] = e
	}
	return m
}

// TestDescribeUnavailableShowsDeclaredPolicy: a service whose policy
// cannot be clamped has no effective policy; its descriptor (diagnostics)
// shows the policy it declared, never invented values such as pure false,
// an empty deduplication or limits of 0 (issue 16, item 22).
func TestDescribeUnavailableShowsDeclaredPolicy(t *testing.T) {
	p := policy.DefaultPlatform()
	d := allocator(t)
	unusable := &registry.Service{Definition: d, Source: "b.wasm", Unavailable: toolerr.New(toolerr.InvalidOperationPolicy)}
	got := catalog.Describe(unusable, p).Operations
	if len(got) != len(d.Operations) {
		t.Fatalf("operations %+v, want %d", got, len(d.Operations))
	}
	for i, op := range d.Operations {
		e, dp := got[i], op.Policy
		if e.Name != dp.Name || !e.Pure || e.Deduplication != policy.DeduplicationNone || e.Deterministic != dp.Deterministic {
			t.Errorf("%s: %+v, want the declared flags of %+v", dp.Name, e, dp)
		}
		if e.MaxParameterBytes != dp.MaxParameterBytes || e.MaxResultBytes != dp.MaxResultBytes || e.HardTimeoutMS != dp.HardTimeoutMS ||
			e.SoftTimeoutMS != dp.SoftTimeoutMS || e.EngineTimeoutMS != dp.EngineTimeoutMS || e.QueueTimeoutMS != dp.QueueTimeoutMS ||
			e.CleanupTimeoutMS != dp.CleanupTimeoutMS || e.RequestTimeoutMS != dp.RequestTimeoutMS || e.ClientTimeoutMS != dp.ClientTimeoutMS ||
			e.MemoryLimitBytes != dp.MemoryLimitBytes || e.MaxParameterBytes == 0 {
			t.Errorf("%s: limits %+v, want the declared %+v", dp.Name, e, dp)
		}
		if e.IngressTimeoutMS != p.IngressTimeoutMS || e.OutputReserveMS != p.OutputReserveMS || e.ResponseReserveMS != p.ResponseReserveMS {
			t.Errorf("%s: reserves %+v, want the platform's", dp.Name, e)
		}
	}
}

func TestBuild(t *testing.T) {
	p := policy.DefaultPlatform()
	d := allocator(t)
	healthy := &registry.Service{Definition: d, Effective: effective(t, p, d), Source: "allocator.wasm"}
	broken := *d
	broken.ToolCode = "broken_policy"
	unusable := &registry.Service{Definition: &broken, Source: "b.wasm",
		Unavailable: toolerr.New(toolerr.InvalidOperationPolicy)}
	engineless := *d
	engineless.ToolCode = "needs_engine"
	missing := &registry.Service{Definition: &engineless, Source: "builtin/x", Effective: effective(t, p, d),
		Unavailable: toolerr.New(toolerr.ToolUnavailable, toolerr.NewIssue(registry.IssueEngineMissing, "cbc"))}
	snap := registry.NewSnapshot(1, []*registry.Service{unusable, healthy, missing}, []registry.Failure{
		{File: "dup.wasm", ToolCode: "dup_code", Reason: registry.ReasonDuplicateCode},
		{File: "other.wasm", ToolCode: "dup_code", Reason: registry.ReasonDuplicateCode},
		{File: "garbage.wasm", Reason: registry.ReasonImportFailed},
	})
	c := catalog.Build(p, snap)
	if c.Version != "2" || c.Policy != p {
		t.Errorf("version %q policy %+v", c.Version, c.Policy)
	}
	if len(c.Items) != 1 || c.Items[0].ToolCode != d.ToolCode {
		t.Fatalf("items %+v, want the one healthy service", c.Items)
	}
	want := []catalog.Unavailable{
		{ToolCode: "broken_policy", Reason: catalog.UnavailablePolicy},
		{ToolCode: "dup_code", Reason: catalog.UnavailableRegistration},
		{ToolCode: "needs_engine", Reason: catalog.UnavailableEngine},
	}
	if !slices.Equal(c.Unavailable, want) {
		t.Errorf("unavailable %+v, want %+v", c.Unavailable, want)
	}
	item := c.Items[0]
	if item.SchemaFingerprint != d.Fingerprint || item.ContractVersion != d.ContractVersion || item.ImplementationVersion != d.ImplementationVersion {
		t.Errorf("identity %+v", item)
	}
	// Operations carry the clamped limits: the fixture's plan asks for
	// 256 KiB of parameters, the platform allows 128 KiB.
	var plan *policy.Effective
	for i := range item.Operations {
		if item.Operations[i].Name == "plan" {
			plan = &item.Operations[i]
		}
	}
	if plan == nil || plan.MaxParameterBytes != p.MaxParameterBytes {
		t.Errorf("plan operation %+v, want max_parameter_bytes clamped to %d", plan, p.MaxParameterBytes)
	}
	// The full schemas travel, local definitions included.
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Items []struct {
			InputSchema map[string]any `json:"input_schema"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if _, ok := back.Items[0].InputSchema["$defs"]; !ok {
		t.Errorf("input schema lost its $defs: %v", back.Items[0].InputSchema)
	}
}
