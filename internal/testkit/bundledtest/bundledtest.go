// Package bundledtest runs a bundled tool package's registered services on
// the host the way the platform does, for the packages' tests: the
// declaration through tooldef (metadata, policies, schema profile), the
// parameters and the result through the services' JSON Schemas, the
// compute call through guest.Invoke. Only _test files import it, so none of
// it reaches a WASM module.
package bundledtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

// Tools is the registered package, checked and compiled.
type Tools struct {
	Package *tooldef.Package
	defs    map[string]*tooldef.Definition
	in, out map[string]*schema.Validator
}

// Load checks the package registered with guest.Register as the platform
// does at discovery and fails the test on any refusal. It checks that every
// service has the bundled metadata conventions and that the codes are codes.
func Load(t *testing.T, codes ...string) *Tools {
	t.Helper()
	decl, err := guest.Describe()
	if err != nil {
		t.Fatalf("describe: %v", err)
	}
	p, err := tooldef.Decode(decl, tooldef.Options{})
	if err != nil {
		t.Fatalf("declaration refused: %v", err)
	}
	tools := &Tools{Package: p, defs: map[string]*tooldef.Definition{},
		in: map[string]*schema.Validator{}, out: map[string]*schema.Validator{}}
	var got []string
	for _, s := range p.Services {
		if s.Refusal != nil {
			t.Fatalf("service %q refused: %v (cause %v)", s.ToolCode, s.Refusal, s.Refusal.Cause)
		}
		d := s.Definition
		got = append(got, d.ToolCode)
		tools.defs[d.ToolCode] = d
		if tools.in[d.ToolCode], err = schema.Compile(d.InputSchema); err != nil {
			t.Fatalf("%s input schema: %v", d.ToolCode, err)
		}
		if tools.out[d.ToolCode], err = schema.Compile(d.OutputSchema); err != nil {
			t.Fatalf("%s output schema: %v", d.ToolCode, err)
		}
		checkConventions(t, d)
	}
	if !slices.Equal(got, codes) {
		t.Fatalf("services %v, want %v", got, codes)
	}
	return tools
}

func checkConventions(t *testing.T, d *tooldef.Definition) {
	t.Helper()
	code := d.ToolCode
	switch {
	case d.NameI18nKey == nil || *d.NameI18nKey != "tools."+code+".name",
		d.DescriptionI18nKey == nil || *d.DescriptionI18nKey != "tools."+code+".description":
		t.Errorf("%s: i18n keys %v %v", code, d.NameI18nKey, d.DescriptionI18nKey)
	case d.IconKey != code || d.UI.Kind != "custom" || d.UI.ComponentKey != strings.ReplaceAll(code, "_", "-"):
		t.Errorf("%s: icon %q, ui %+v", code, d.IconKey, d.UI)
	case d.Documentation.Path != "tools/"+code || d.Documentation.Version != "1.0.0":
		t.Errorf("%s: documentation %+v", code, d.Documentation)
	}
	for _, lang := range tooldef.Languages {
		if lang != "en" && d.I18n[lang] == d.I18n["en"] {
			t.Errorf("%s: %s texts are the English ones", code, lang)
		}
	}
	for _, op := range d.Operations {
		if !op.Policy.Deterministic {
			t.Errorf("%s/%s: not deterministic", code, op.Policy.Name)
		}
	}
	// ADR-027: a browser transform with a server engine.
	p := d.Platform
	if p.Execution != contracts.ExecutionClient || !p.API || !p.Anonymous || p.Egress || len(p.Hosts) != 0 ||
		p.QuotaClass != "tools-run" || p.Cost != 1 || p.Job != nil || p.OutputFiles || p.Status != contracts.StatusStable {
		t.Errorf("%s: platform %+v, want a stable client transform in the API", code, p)
	}
}

// Run runs one item of service code as the platform does. params is the
// parameters document. A parameters document the input schema refuses is a
// *toolerr.Error (invalid_parameters, from the platform); a tool error is
// the tool's *guest.Error. A result the output schema refuses fails the
// test. The result is returned decoded as encoding/json decodes it.
func (tools *Tools) Run(t *testing.T, code, params string) (map[string]any, error) {
	t.Helper()
	out, err := tools.run(t, code, params)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m, nil
}

// run is Run returning the result document as the guest wrote it.
func (tools *Tools) run(t *testing.T, code, params string) ([]byte, error) {
	t.Helper()
	in, ok := tools.in[code]
	if !ok {
		t.Fatalf("no service %q", code)
	}
	doc, err := wire.Decode([]byte(params), wire.Limits{MaxBytes: 128 << 10, MaxDepth: 32})
	if err != nil {
		t.Fatalf("parameters are not strict JSON: %v", err)
	}
	if err := in.Validate(doc, toolerr.InvalidParameters); err != nil {
		return nil, err
	}
	op, _ := doc.(map[string]any)["operation"].(string)
	envelope := fmt.Sprintf(`{"tool_code":%q,"operation":%q,"parameters":%s}`, code, op, params)
	out, err := guest.Invoke([]byte(envelope))
	if err != nil {
		var ge *guest.Error
		if !errors.As(err, &ge) {
			t.Fatalf("Invoke returned %T %v, not a *guest.Error", err, err)
		}
		if len(ge.Message) > guest.MaxMessageBytes {
			t.Errorf("message of %d bytes", len(ge.Message))
		}
		return nil, err
	}
	result, err := wire.Decode(out, wire.Limits{MaxBytes: 256 << 10, MaxDepth: 32})
	if err != nil {
		t.Fatalf("result is not strict JSON: %v", err)
	}
	if err := tools.out[code].Validate(result, toolerr.InvalidOutput); err != nil {
		t.Fatalf("result %s refused by the output schema: %v", out, err)
	}
	return out, nil
}

// Text runs an item that must succeed and returns its "text" result.
func (tools *Tools) Text(t *testing.T, code, params string) string {
	t.Helper()
	m, err := tools.Run(t, code, params)
	if err != nil {
		t.Fatalf("%s %s: %v", code, params, err)
	}
	s, ok := m["text"].(string)
	if !ok {
		t.Fatalf("%s %s: no text in %v", code, params, m)
	}
	return s
}

// ToolError runs an item that must fail with a tool error of code
// invalid_parameters and returns its message.
func (tools *Tools) ToolError(t *testing.T, code, params string) string {
	t.Helper()
	_, err := tools.Run(t, code, params)
	var ge *guest.Error
	if !errors.As(err, &ge) || ge.Code != guest.CodeInvalidParameters {
		t.Fatalf("%s %s: got %v, want an invalid_parameters tool error", code, params, err)
	}
	return ge.Message
}

// Refused runs an item whose parameters the input schema must refuse.
func (tools *Tools) Refused(t *testing.T, code, params string) {
	t.Helper()
	_, err := tools.Run(t, code, params)
	var te *toolerr.Error
	if !errors.As(err, &te) || te.Code != toolerr.InvalidParameters {
		t.Fatalf("%s %s: got %v, want the schema's invalid_parameters", code, params, err)
	}
}

// MaxLength returns the maxLength of the input property name for
// operation op, or -1.
func (tools *Tools) MaxLength(code, op, name string) int {
	s := tools.defs[code].InputSchema.(map[string]any)
	if defs, ok := s["$defs"].(map[string]any); ok {
		s = defs[op].(map[string]any)
	}
	prop, ok := s["properties"].(map[string]any)[name].(map[string]any)
	if !ok {
		return -1
	}
	switch n := prop["maxLength"].(type) {
	case json.Number:
		v, _ := n.Int64()
		return int(v)
	case float64:
		return int(n)
	}
	return -1
}
