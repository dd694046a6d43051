package pdf_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/engines/pdf"
	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

// requireEngines skips the test when qpdf or pdftoppm is missing, and
// fails it instead under CI=true.
func requireEngines(t *testing.T) {
	t.Helper()
	p := pdf.Package()
	testkit.RequireEngines(t, p.Name, p.MissingEngines())
}

// service is a declared service as the platform sees it: its checked
// definition, its effective policy on the default platform, and its
// compiled schemas.
type service struct {
	def      *tooldef.Definition
	eff      policy.Effective
	in, out  *schema.Validator
	code, op string
}

// services decodes the package declaration as the registry does.
func services(t *testing.T) map[string]*service {
	t.Helper()
	decl, err := tooldef.Decode(pdf.Package().Declaration, tooldef.Options{})
	if err != nil {
		t.Fatalf("tooldef.Decode: %v", err)
	}
	out := map[string]*service{}
	for _, d := range decl.Services {
		if d.Refusal != nil {
			t.Fatalf("service %s refused: %v", d.ToolCode, d.Refusal)
		}
		def := d.Definition
		if len(def.Operations) != 1 {
			t.Fatalf("service %s has %d operations, want 1", def.ToolCode, len(def.Operations))
		}
		eff, err := policy.Clamp(policy.DefaultPlatform(), def.Operations[0].Policy)
		if err != nil {
			t.Fatalf("service %s: clamping its policy: %v", def.ToolCode, err)
		}
		in, err := schema.Compile(def.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		outSchema, err := schema.Compile(def.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		out[def.ToolCode] = &service{def: def, eff: eff, in: in, out: outSchema, code: def.ToolCode, op: def.Operations[0].Policy.Name}
	}
	return out
}

func TestDeclaration(t *testing.T) {
	p := pdf.Package()
	if p.Name != "pdf" || !slices.Equal(p.Engines, []string{"qpdf", "pdftoppm"}) || p.Compute == nil {
		t.Fatalf("package %q engines %v", p.Name, p.Engines)
	}
	svcs := services(t)
	tests := []struct {
		name, code, op string
		deterministic  bool
		maxFile        int64
	}{
		{name: "protect", code: "pdf_protect", op: "protect", maxFile: pdf.MaxProtectFileBytes},
		{name: "to image", code: "pdf_to_image", op: "render", deterministic: true, maxFile: pdf.MaxRenderFileBytes},
	}
	if len(svcs) != len(tests) {
		t.Fatalf("%d services, want %d", len(svcs), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := svcs[tt.code]
			if s == nil {
				t.Fatalf("no service %s", tt.code)
			}
			d := s.def
			if d.Category != "pdf" || d.IconKey != tt.code || d.UI.ComponentKey != tt.code ||
				d.Documentation.Path != "tools/"+tt.code || d.ContractVersion != "1.0.0" || d.ImplementationVersion != "1.0.0" {
				t.Errorf("metadata: %+v", d)
			}
			for _, lang := range tooldef.Languages {
				if d.I18n[lang].Name == "" || d.I18n[lang].Description == "" {
					t.Errorf("no %s text", lang)
				}
			}
			if _, err := os.Stat(filepath.Join("..", "..", "..", "docs", d.Documentation.Path+".md")); err != nil {
				t.Errorf("documentation page: %v", err)
			}
			op := d.Operations[0].Policy
			if op.Name != tt.op || op.Deterministic != tt.deterministic {
				t.Errorf("operation %q deterministic %v", op.Name, op.Deterministic)
			}
			if op.MaxParameterBytes != pdf.MaxParameterBytes || op.MaxResultBytes != pdf.MaxResultBytes {
				t.Errorf("byte limits %d/%d", op.MaxParameterBytes, op.MaxResultBytes)
			}
			// The platform's caps are what the operation declares, and the
			// engine window can be claimed with time to spare at the start.
			if s.eff.MaxParameterBytes != pdf.MaxParameterBytes || s.eff.MaxResultBytes != pdf.MaxResultBytes {
				t.Errorf("effective byte limits %d/%d", s.eff.MaxParameterBytes, s.eff.MaxResultBytes)
			}
			// ADR-027: a job tool with a PDF file in and files out, for
			// signed-in callers only.
			pl := d.Platform
			if pl.Execution != contracts.ExecutionJob || !pl.API || pl.Job == nil || pl.Job.Type != pdf.JobType ||
				pl.Job.Operation != tt.op || !pl.OutputFiles || pl.Anonymous || pl.QuotaClass != pdf.QuotaClass || pl.Cost < 2 {
				t.Errorf("platform %+v", pl)
			}
			if len(pl.Files) != 1 || pl.Files[0].Name != "file" || !slices.Equal(pl.Files[0].Types, []string{"application/pdf"}) ||
				pl.Files[0].MaxBytes != tt.maxFile {
				t.Errorf("file inputs %+v", pl.Files)
			}
			if slack := s.eff.SoftTimeoutMS - s.eff.EngineTimeoutMS; slack < 1500 {
				t.Errorf("soft %d ms − engine %d ms leaves %d ms for start-up and the post-engine reserve",
					s.eff.SoftTimeoutMS, s.eff.EngineTimeoutMS, slack)
			}
		})
	}
}

// params is a parameters document.
type params map[string]any

// compute runs one item as the worker does: the parameters validated
// against the input schema, Compute through a native.Context with the
// effective budgets, the result validated against the output schema and
// held to the result cap. It returns the result decoded into out.
func compute(t *testing.T, code string, p params, out any) error {
	t.Helper()
	s := services(t)[code]
	if s == nil {
		t.Fatalf("no service %s", code)
	}
	body, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(body) > int(s.eff.MaxParameterBytes) {
		return toolerr.New(toolerr.InputLimitExceeded)
	}
	doc, err := wire.Decode(body, wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.in.Validate(doc, toolerr.InvalidParameters); err != nil {
		return err
	}
	now := time.Now()
	ctx := native.NewContext(context.Background(), "test", now.Add(time.Duration(s.eff.SoftTimeoutMS)*time.Millisecond),
		time.Duration(s.eff.EngineTimeoutMS)*time.Millisecond)
	res, err := computeWith(t, ctx, code, s.op, body)
	if err != nil {
		return err
	}
	if len(res) > int(s.eff.MaxResultBytes) {
		t.Fatalf("result of %d bytes passed the %d-byte cap", len(res), s.eff.MaxResultBytes)
	}
	rdoc, err := wire.Decode(res, wire.Limits{})
	if err != nil {
		t.Fatalf("result is not strict JSON: %v", err)
	}
	if err := s.out.Validate(rdoc, toolerr.InvalidOutput); err != nil {
		t.Fatalf("result fails the output schema: %v %+v", err, err)
	}
	if err := json.Unmarshal(res, out); err != nil {
		t.Fatal(err)
	}
	return nil
}

// computeWith calls the package's Compute with ctx, and checks that it
// left nothing in the temporary directory.
func computeWith(t *testing.T, ctx *native.Context, code, op string, body []byte) ([]byte, error) {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	res, err := pdf.Package().Compute(ctx, native.Call{ToolCode: code, Operation: op, Parameters: body})
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("Compute left %d entries in TMPDIR (%s)", len(left), left[0].Name())
	}
	return res, err
}

// wantToolError checks that err is a *toolerr.Error with code and, when
// message is not empty, a message containing it.
func wantToolError(t *testing.T, err error, code toolerr.Code, message string) *toolerr.Error {
	t.Helper()
	var te *toolerr.Error
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T), want a *toolerr.Error %s", err, err, code)
	}
	if te.Code != code {
		t.Fatalf("code %s (%q), want %s", te.Code, te.Message, code)
	}
	if !strings.Contains(te.Message, message) {
		t.Fatalf("message %q, want it to contain %q", te.Message, message)
	}
	return te
}

func TestUnknownService(t *testing.T) {
	ctx := native.NewContext(context.Background(), "test", time.Now().Add(time.Minute), time.Second)
	_, err := pdf.Package().Compute(ctx, native.Call{ToolCode: "pdf_protect", Operation: "render", Parameters: []byte(`{}`)})
	if !errors.Is(err, pdf.ErrUnknownService) {
		t.Fatalf("err %v, want ErrUnknownService", err)
	}
}

// TestParametersOperation: a document naming another operation than the
// call is refused before any engine runs.
func TestParametersOperation(t *testing.T) {
	ctx := native.NewContext(context.Background(), "test", time.Now().Add(time.Minute), time.Second)
	_, err := computeWith(t, ctx, "pdf_to_image", "render", []byte(`{"operation":"render","file":"JVBERi0xLjQK","extra":1}`))
	wantToolError(t, err, toolerr.InvalidParameters, "input schema")
	_, err = computeWith(t, ctx, "pdf_to_image", "render", []byte(`{"operation":"Render","file":"JVBERi0xLjQK"}`))
	wantToolError(t, err, toolerr.InvalidParameters, "another operation")
}
