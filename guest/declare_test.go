//go:build !wasip1 && !guestgen

package guest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the current output")

// goldenPackage declares two services: one operation with a flat input,
// and three operations with per-operation fields.
func goldenPackage() Package {
	single := testService("slug", []Operation{{Name: "slugify", Deterministic: true}}, noCompute[flatIn, flatOut])
	single.NameKey, single.DescriptionKey = "tools.slug.name", "tools.slug.description"
	multi := testService("fmt", []Operation{
		{Name: "format", Deterministic: true, MaxParameterBytes: 65536, SoftTimeoutMS: 2000},
		{Name: "minify", Deterministic: true},
		{Name: "validate"},
	}, noCompute[multiIn, multiOut])
	return Package{ContractVersion: "1.0.0", ImplementationVersion: "1.2.3-rc.1", Services: []Declaration{single, multi}}
}

func TestDescribeGolden(t *testing.T) {
	usePackage(t, goldenPackage())
	got, err := Describe()
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}

	// The host's checks of the golden file (wire.Decode, schema.Check)
	// are internal/guesttest's TestDescribeGoldenPassesProfile.
	v := decodeJSON(t, got)
	equalJSON(t, get(t, v, "services", 1, "operations"), `[
		{"operation":"format","deterministic":true,"max_parameter_bytes":65536,"soft_timeout_ms":2000},
		{"operation":"minify","deterministic":true},
		{"operation":"validate","deterministic":false}]`)
	if _, has := get(t, v, "services", 1).(map[string]any)["name_i18n_key"]; has {
		t.Error("an empty i18n key is declared")
	}

	var indented bytes.Buffer
	if err := json.Indent(&indented, got, "", "  "); err != nil {
		t.Fatal(err)
	}
	indented.WriteByte('\n')
	path := filepath.Join("testdata", "describe.golden.json")
	if *update {
		if err := os.WriteFile(path, indented.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the golden file (regenerate with -update): %v", err)
	}
	if !bytes.Equal(indented.Bytes(), want) {
		t.Errorf("describe output differs from %s (regenerate with -update if intended):\n%s", path, indented.Bytes())
	}
}

func TestDeclarationMetadataRefusals(t *testing.T) {
	valid := func() *Service[flatIn, flatOut] { return testService("ok", ops("run"), noCompute[flatIn, flatOut]) }
	pkg := func(ss ...Declaration) Package {
		return Package{ContractVersion: "1.0.0", ImplementationVersion: "1.0.0", Services: ss}
	}
	with := func(edit func(s *Service[flatIn, flatOut])) Package {
		s := valid()
		edit(s)
		return pkg(s)
	}
	many := make([]Declaration, 17)
	for i := range many {
		many[i] = testService("s"+strings.Repeat("x", i), ops("run"), noCompute[flatIn, flatOut])
	}
	for _, tc := range []struct {
		name string
		p    Package
		want string
	}{
		{"contract version", Package{ContractVersion: "1.0", ImplementationVersion: "1.0.0", Services: []Declaration{valid()}}, "contract_version"},
		{"implementation version", Package{ContractVersion: "1.0.0", ImplementationVersion: "v1.0.0", Services: []Declaration{valid()}}, "implementation_version"},
		{"no services", pkg(), "1 to 16 services, not 0"},
		{"17 services", pkg(many...), "1 to 16 services, not 17"},
		{"nil service", pkg(valid(), nil), "services[1] is nil"},
		{"duplicate code", pkg(valid(), valid()), `tool_code "ok" is declared twice`},
		{"bad code", with(func(s *Service[flatIn, flatOut]) { s.Code = "Hash" }), `tool_code "Hash"`},
		{"long code", with(func(s *Service[flatIn, flatOut]) { s.Code = strings.Repeat("a", 65) }), "at most 64 bytes"},
		{"reserved code", with(func(s *Service[flatIn, flatOut]) { s.Code = "catalog" }), "not be catalog"},
		{"empty name", with(func(s *Service[flatIn, flatOut]) { s.Name = "" }), "name and description"},
		{"three languages", with(func(s *Service[flatIn, flatOut]) { delete(s.Texts, "es") }), "exactly en, it, fr and es"},
		{"fifth language", with(func(s *Service[flatIn, flatOut]) { s.Texts["de"] = Text{"a", "b"} }), "exactly en, it, fr and es"},
		{"empty text", with(func(s *Service[flatIn, flatOut]) { s.Texts["fr"] = Text{Name: "x"} }), `texts["fr"]`},
		{"category", with(func(s *Service[flatIn, flatOut]) { s.Category = "Dev" }), "category"},
		{"icon", with(func(s *Service[flatIn, flatOut]) { s.IconKey = "" }), "icon_key"},
		{"ui kind", with(func(s *Service[flatIn, flatOut]) { s.UI.Kind = "builtin" }), "ui.kind"},
		{"ui component", with(func(s *Service[flatIn, flatOut]) { s.UI.ComponentKey = "" }), "ui.component_key"},
		{"ui version", with(func(s *Service[flatIn, flatOut]) { s.UI.Version = "1" }), "ui.version"},
		{"doc path absolute", with(func(s *Service[flatIn, flatOut]) { s.Documentation.Path = "/tools/x" }), "documentation.path"},
		{"doc path language", with(func(s *Service[flatIn, flatOut]) { s.Documentation.Path = "en/tools/x" }), "documentation.path"},
		{"doc path mkdocs", with(func(s *Service[flatIn, flatOut]) { s.Documentation.Path = "mkdocs/x" }), "documentation.path"},
		{"doc path extension", with(func(s *Service[flatIn, flatOut]) { s.Documentation.Path = "tools/x.md" }), "documentation.path"},
		{"doc path empty segment", with(func(s *Service[flatIn, flatOut]) { s.Documentation.Path = "tools//x" }), "documentation.path"},
		{"doc version", with(func(s *Service[flatIn, flatOut]) { s.Documentation.Version = "" }), "documentation.version"},
		{"no operations", with(func(s *Service[flatIn, flatOut]) { s.Operations = nil }), "no operations"},
		{"bad operation", with(func(s *Service[flatIn, flatOut]) { s.Operations = ops("Run") }), `name "Run"`},
		{"duplicate operation", with(func(s *Service[flatIn, flatOut]) { s.Operations = ops("run", "run") }), `"run" is declared twice`},
		{"negative limit", with(func(s *Service[flatIn, flatOut]) { s.Operations[0].HardTimeoutMS = -1 }), "hard_timeout_ms is negative"},
		{"nil compute", with(func(s *Service[flatIn, flatOut]) { s.Compute = nil }), "Compute is nil"},
		{"platform status", with(func(s *Service[flatIn, flatOut]) { s.Platform = &Platform{Status: "gone"} }), "platform: status"},
		{"platform reason", with(func(s *Service[flatIn, flatOut]) { s.Platform = &Platform{Status: "unavailable"} }), "StatusReason"},
		{"platform execution", with(func(s *Service[flatIn, flatOut]) { s.Platform = &Platform{Execution: "batch"} }), "platform: execution"},
		{"platform job on sync", with(func(s *Service[flatIn, flatOut]) {
			s.Platform = &Platform{Execution: "sync", Job: &Job{Type: "x", Operation: "run"}}
		}), "only a job tool"},
		{"platform job missing", with(func(s *Service[flatIn, flatOut]) { s.Platform = &Platform{Execution: "job"} }), "names its Job"},
		{"platform negative cost", with(func(s *Service[flatIn, flatOut]) { s.Platform = &Platform{Cost: -1} }), "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := declare(tc.p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("declare error = %v, want it to contain %q", err, tc.want)
			}
		})
	}

	// The valid forms pass: a trailing slash, an empty UI kind.
	ok := with(func(s *Service[flatIn, flatOut]) { s.Documentation.Path = "tools/x_y-z/"; s.UI.Kind = "" })
	if _, err := declare(ok); err != nil {
		t.Fatalf("declare: %v", err)
	}
}

func TestRunDescribe(t *testing.T) {
	t.Run("ok", func(t *testing.T) {
		usePackage(t, goldenPackage())
		f := useFake(t)
		if rc := runDescribe(); rc != 0 {
			t.Fatalf("rc = %d, error %s", rc, f.errDoc)
		}
		want, _ := Describe()
		if !bytes.Equal(f.output, want) {
			t.Errorf("output differs from Describe:\n%s\n%s", f.output, want)
		}
	})
	t.Run("refused", func(t *testing.T) {
		p := goldenPackage()
		p.ContractVersion = "one"
		usePackage(t, p)
		f := useFake(t)
		if rc := runDescribe(); rc != 1 {
			t.Fatalf("rc = %d", rc)
		}
		equalJSON(t, decodeJSON(t, f.errDoc), `{"code":"execution_failed","message":"guest: declaration: contract_version \"one\" is not a SemVer string","retryable":false}`)
	})
	t.Run("not registered", func(t *testing.T) {
		usePackage(t, Package{})
		registration.registered = false
		f := useFake(t)
		if rc := runDescribe(); rc != 1 {
			t.Fatalf("rc = %d", rc)
		}
		if !strings.Contains(string(f.errDoc), "call guest.Register") {
			t.Errorf("error = %s", f.errDoc)
		}
	})
	t.Run("no memory", func(t *testing.T) {
		usePackage(t, goldenPackage())
		f := useFake(t)
		f.noAlloc = true
		if rc := runDescribe(); rc != 1 || f.output != nil || f.errDoc != nil {
			t.Fatalf("rc = %d, output %q, error %q", rc, f.output, f.errDoc)
		}
	})
}

func TestRegisterTwicePanics(t *testing.T) {
	usePackage(t, Package{})
	registration.registered = false
	Register(goldenPackage())
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "more than once") {
			t.Fatalf("recover() = %v", r)
		}
	}()
	Register(goldenPackage())
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return v
}

// A generated declaration that differs from the derived one is refused as
// stale; one that matches is the declaration.
func TestGeneratedDeclaration(t *testing.T) {
	usePackage(t, goldenPackage())
	want, err := Describe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { generated.declaration = "" })
	for _, tc := range []struct {
		name, generated string
		stale           bool
	}{
		{"current", string(want), false},
		{"stale", string(want[:len(want)-1]) + ` `, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			usePackage(t, goldenPackage())
			UseDeclaration(tc.generated)
			got, err := Describe()
			if tc.stale {
				if err == nil || !strings.Contains(err.Error(), "stale: run go generate") {
					t.Fatalf("Describe() = %v, want the stale refusal", err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("Describe() = %s, %v", got, err)
			}
		})
	}
}
