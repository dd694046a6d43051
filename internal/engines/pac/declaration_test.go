package pac

import (
	"reflect"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/toolerr"
)

func TestDeclarationAccepted(t *testing.T) {
	pkg := Package()
	if pkg.Name != "pac_allocator" || !reflect.DeepEqual(pkg.Engines, []string{"cbc"}) || pkg.Compute == nil {
		t.Fatalf("package = %q engines %v", pkg.Name, pkg.Engines)
	}
	def, err := definition()
	if err != nil {
		t.Fatalf("tooldef.Decode refuses the declaration: %v", err)
	}
	if def.ToolCode != "pac_allocator" || def.ContractVersion != "1.0.0" || def.ImplementationVersion != "1.0.0" {
		t.Errorf("identity = %s %s %s", def.ToolCode, def.ContractVersion, def.ImplementationVersion)
	}
	if def.UI.Kind != "custom" || def.UI.ComponentKey != "pac-allocator" || def.UI.Version != "1.0.0" {
		t.Errorf("ui = %+v", def.UI)
	}
	if def.Documentation.Path != "tools/pac_allocator" || def.Documentation.Version != "1.0.0" {
		t.Errorf("documentation = %+v", def.Documentation)
	}
	for _, lang := range []string{"en", "it", "fr", "es"} {
		if txt, ok := def.I18n[lang]; !ok || txt.Name == "" || txt.Description == "" {
			t.Errorf("i18n[%s] = %+v", lang, txt)
		}
	}
	if def.Category != "finance" || def.IconKey != "pie_chart" {
		t.Errorf("category %q icon %q", def.Category, def.IconKey)
	}
	if !reflect.DeepEqual(def.OperationNames(), []string{"plan", "value"}) && !reflect.DeepEqual(def.OperationNames(), []string{"value", "plan"}) {
		t.Errorf("operations = %v", def.OperationNames())
	}
	if len(def.Fingerprint) != 64 {
		t.Errorf("fingerprint = %q", def.Fingerprint)
	}
	// ADR-027: a sync tool, answered inline, in a quota class of its own
	// at more than a transform's cost.
	if p := def.Platform; p.Execution != contracts.ExecutionSync || !p.API || p.Job != nil || !p.Anonymous ||
		p.QuotaClass != QuotaClass || p.Cost <= 1 || p.Egress || p.OutputFiles {
		t.Errorf("platform = %+v", p)
	}
	// The input is a discriminated union on operation.
	in := def.InputSchema.(map[string]any)
	disc, _ := in["discriminator"].(map[string]any)
	if disc["propertyName"] != "operation" {
		t.Errorf("input schema has no operation discriminator: %v", in["discriminator"])
	}
}

func TestPlanPolicy(t *testing.T) {
	def, err := definition()
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]policy.Operation{}
	for _, op := range def.Operations {
		ops[op.Policy.Name] = op.Policy
	}
	plan := ops["plan"]
	want := policy.Operation{
		Name: "plan", Pure: true, Deterministic: false, Deduplication: policy.DeduplicationNone,
		MaxParameterBytes: 256 * policy.KiB, MaxResultBytes: 512 * policy.KiB,
		QueueTimeoutMS: 5000, EngineTimeoutMS: 30000, SoftTimeoutMS: 44000, HardTimeoutMS: 45000,
		CleanupTimeoutMS: 5000, RequestTimeoutMS: 59000, ClientTimeoutMS: 65000,
		MemoryLimitBytes: plan.MemoryLimitBytes,
	}
	if plan != want {
		t.Errorf("plan policy = %+v\nwant %+v", plan, want)
	}
	if plan.MaxParameterBytes != 262144 || plan.MaxResultBytes != 524288 {
		t.Errorf("plan declares %d / %d bytes, want 256 KiB / 512 KiB", plan.MaxParameterBytes, plan.MaxResultBytes)
	}
	// The seed: the clamp caps plan at the platform's 128 KiB / 256 KiB,
	// and its time budgets are the platform's, with no slack.
	for name, op := range ops {
		eff, err := policy.Clamp(policy.DefaultPlatform(), op)
		if err != nil {
			t.Fatalf("%s: the default platform refuses the policy: %v", name, err)
		}
		if name == "plan" {
			if eff.MaxParameterBytes != 128*policy.KiB || eff.MaxResultBytes != 256*policy.KiB || eff.EngineTimeoutMS != 30000 || eff.RequestTimeoutMS != 59000 {
				t.Errorf("plan effective = %+v", eff)
			}
			if eff.ServerBoundMS() != eff.RequestTimeoutMS {
				t.Errorf("plan server bound %d, request %d: the seed says no slack", eff.ServerBoundMS(), eff.RequestTimeoutMS)
			}
		}
	}
	value := ops["value"]
	if !value.Deterministic || value.EngineTimeoutMS >= plan.EngineTimeoutMS || value.HardTimeoutMS >= plan.HardTimeoutMS {
		t.Errorf("value policy = %+v", value)
	}
}

// TestDecimalPatternTags checks that every decimal parameter's pattern tag
// is decimalPattern, which parseDecimal relies on.
func TestDecimalPatternTags(t *testing.T) {
	n := 0
	for _, typ := range []reflect.Type{reflect.TypeFor[Input](), reflect.TypeFor[Holding](), reflect.TypeFor[FXRate](), reflect.TypeFor[Target](), reflect.TypeFor[Fees]()} {
		for i := range typ.NumField() {
			f := typ.Field(i)
			p, ok := f.Tag.Lookup("pattern")
			if !ok || strings.Contains(p, "A-Z") {
				continue
			}
			n++
			if p != decimalPattern {
				t.Errorf("%s.%s: pattern %q, want decimalPattern", typ.Name(), f.Name, p)
			}
		}
	}
	if n < 10 {
		t.Errorf("only %d decimal fields found", n)
	}
}

func TestComputeRefusesAMismatchedCall(t *testing.T) {
	ctx := newContext(t)
	for _, tc := range []struct {
		name, code, op, params string
	}{
		{"unknown tool", "other", "value", `{"operation":"value"}`},
		{"unknown operation", Name, "sell", `{"operation":"sell"}`},
		{"operation mismatch", Name, "plan", `{"operation":"value","currency":"EUR","holdings":[]}`},
		{"unknown field", Name, "value", `{"operation":"value","currency":"EUR","holdings":[],"x":1}`},
		{"not JSON", Name, "value", `{`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compute(ctx, nativeCall(tc.code, tc.op, tc.params))
			if code, _ := toolerr.CodeOf(err); code != toolerr.InvalidParameters {
				t.Fatalf("err = %v, want invalid_parameters", err)
			}
		})
	}
}
