package registry_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// The bundled modules are discovered healthy: every service published,
// code-sorted, with the effective policy of every operation, runnable
// through its Runner.
func TestDiscoverBundled(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"codec", "text", "markup"} {
		writeFile(t, filepath.Join(dir, name+".wasm"), bundled(t, name))
		age(t, filepath.Join(dir, name+".wasm"))
	}
	cfg, _ := config(t, dir)
	r := open(t, cfg)
	s := r.Snapshot()
	if s.Generation() != 1 {
		t.Errorf("generation %d, want 1", s.Generation())
	}
	want := []string{"base64", "beautify", "case", "hash", "json", "minify", "slug", "url"}
	if got := codes(s); !slices.Equal(got, want) || len(s.Failures()) != 0 {
		t.Fatalf("services %v, failures %+v; want %v and none", got, s.Failures(), want)
	}
	for _, svc := range s.Services() {
		if svc.Unavailable != nil || svc.Runner == nil {
			t.Errorf("%s: unavailable %v, runner %v", svc.Code(), svc.Unavailable, svc.Runner)
		}
		for _, op := range svc.Definition.OperationNames() {
			eff, ok := svc.Effective[op]
			if !ok || eff.Name != op || eff.MemoryLimitBytes <= 0 {
				t.Errorf("%s: operation %s has effective policy %+v", svc.Code(), op, eff)
			}
		}
	}
	if svc, _ := s.Service("hash"); svc.Source != "codec.wasm" {
		t.Errorf("hash comes from %q, want codec.wasm", svc.Source)
	}

	out, err := run(t, s, "hash", `{"operation":"digest","text":"abc","algorithm":"sha256","encoding":"hex"}`)
	if err != nil || !strings.Contains(string(out.Result), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") {
		t.Fatalf("hash = %+v, %v", out, err)
	}
	hash, _ := s.Service("hash")
	m := out.Memory
	if m == nil || m.Mode != engine.MemoryWASMHard || m.LimitBytes != hash.Effective["digest"].MemoryLimitBytes ||
		m.PeakBytes == nil || *m.PeakBytes <= 0 || out.FuelUsed == nil || *out.FuelUsed <= 0 {
		t.Errorf("outcome memory %+v, fuel %v", m, out.FuelUsed)
	}
	p := out.Phases
	if p.Startup == nil || p.InputValidation == nil || p.Compute == nil || p.OutputValidation == nil || p.Serialization == nil {
		t.Errorf("phases %+v: every phase was observed", p)
	}

	// A job that does not carry the published policy, or names another
	// service, is refused before anything runs.
	j := job(t, hash, `{"operation":"digest","text":"abc","algorithm":"sha256","encoding":"hex"}`)
	tighter := j
	tighter.Operation.MemoryLimitBytes /= 2
	if _, err := hash.Runner.Run(context.Background(), tighter); !isCode(err, toolerr.ExecutionFailed) {
		t.Errorf("a job with another memory limit: %v, want execution_failed", err)
	}
	other := j
	other.ToolCode = "base64"
	if _, err := hash.Runner.Run(context.Background(), other); !isCode(err, toolerr.UnknownTool) {
		t.Errorf("a job for another service: %v, want unknown_tool", err)
	}
	// Invalid parameters fail before the sandbox: no memory is reported,
	// only the validation that refused them (issue 16, item 19).
	bad := j
	bad.Parameters = []byte(`{"operation":"digest"}`)
	if out, err := hash.Runner.Run(context.Background(), bad); !isCode(err, toolerr.InvalidParameters) || out == nil ||
		out.Memory != nil || out.FuelUsed != nil || out.Phases.InputValidation == nil || out.Phases.Startup != nil {
		t.Errorf("invalid parameters: %+v, %v", out, err)
	}

	// Nothing changed: a reload publishes nothing.
	again, err := r.Reload(context.Background())
	if err != nil || again != s {
		t.Errorf("Reload of an unchanged folder = generation %d, %v; want the same snapshot", again.Generation(), err)
	}
}

// The same module under two names: every claimant of each of its codes is
// quarantined, neither copy publishes anything, the unrelated modules stay
// healthy. A refused claim still claims its code, and duplicate_code wins
// over its own reason.
func TestDuplicateCodesQuarantineEveryClaimant(t *testing.T) {
	dir := t.TempDir()
	codec := bundled(t, "codec")
	for _, name := range []string{"codec.wasm", "codec_copy.wasm"} {
		writeFile(t, filepath.Join(dir, name), codec)
		age(t, filepath.Join(dir, name))
	}
	writeFile(t, filepath.Join(dir, "ping.wasm"), pingWASM(t))
	age(t, filepath.Join(dir, "ping.wasm"))
	// "shared" is refused in one module (no i18n texts) and healthy in the
	// other; "solo" is healthy.
	sidecarModule(t, dir, "left", service(t, "shared", func(s map[string]any) { delete(s, "i18n") }))
	sidecarModule(t, dir, "right", service(t, "shared", nil), service(t, "solo", nil))

	cfg, _ := config(t, dir)
	s := open(t, cfg).Snapshot()
	if got := codes(s); !slices.Equal(got, []string{"ping", "solo"}) {
		t.Errorf("services %v, want ping and solo", got)
	}
	var want []registry.Failure
	for _, file := range []string{"codec.wasm", "codec_copy.wasm"} {
		for _, code := range []string{"base64", "hash", "url"} {
			want = append(want, registry.Failure{File: file, ToolCode: code, Reason: registry.ReasonDuplicateCode})
		}
	}
	want = append(want,
		registry.Failure{File: "left.wasm", ToolCode: "shared", Reason: registry.ReasonDuplicateCode},
		registry.Failure{File: "right.wasm", ToolCode: "shared", Reason: registry.ReasonDuplicateCode})
	if got := s.Failures(); !slices.Equal(got, want) {
		t.Errorf("failures\n%+v\nwant\n%+v", got, want)
	}
}

// TestFailedModuleClaimsCount: a module that fails to load still claims
// the codes its sidecar declares (issue 16, item 20): a garbage module
// declaring echo_t quarantines the healthy echo_t, duplicate_code first in
// the contract's resolution order, and publishes nothing of its own.
func TestFailedModuleClaimsCount(t *testing.T) {
	dir := t.TempDir()
	sidecarModule(t, dir, "healthy", service(t, "echo_t", nil), service(t, "solo", nil))
	writeFile(t, filepath.Join(dir, "garbage"+registry.SidecarSuffix), declaration(t, service(t, "echo_t", nil), service(t, "lonely", nil)))
	writeFile(t, filepath.Join(dir, "garbage.wasm"), []byte("this is not WebAssembly"))
	age(t, filepath.Join(dir, "garbage"+registry.SidecarSuffix))
	age(t, filepath.Join(dir, "garbage.wasm"))

	cfg, _ := config(t, dir)
	s := open(t, cfg).Snapshot()
	if got := codes(s); !slices.Equal(got, []string{"solo"}) {
		t.Errorf("services %v, want solo alone", got)
	}
	want := []registry.Failure{
		{File: "garbage.wasm", Reason: registry.ReasonImportFailed, Detail: "module_invalid"},
		{File: "garbage.wasm", ToolCode: "echo_t", Reason: registry.ReasonDuplicateCode},
		{File: "healthy.wasm", ToolCode: "echo_t", Reason: registry.ReasonDuplicateCode},
	}
	if got := s.Failures(); !slices.Equal(got, want) {
		t.Errorf("failures\n%+v\nwant\n%+v", got, want)
	}
	if f, ok := s.Quarantined("echo_t"); !ok || f.Reason != registry.ReasonDuplicateCode {
		t.Errorf("echo_t quarantined %v as %+v, want duplicate_code", ok, f)
	}
	if _, ok := s.Quarantined("lonely"); ok {
		t.Error("a failed module's code that no one else claims is listed as a quarantined code")
	}
}

// TestI18nKeyConflict: an i18n key published with other texts by two
// services (in two packages, or one) refuses every service publishing it,
// with no winner, as a duplicate code does (issue 16, item 21); the same
// key with the same texts is one translation.
func TestI18nKeyConflict(t *testing.T) {
	dir := t.TempDir()
	key := func(k, name string) func(map[string]any) {
		return func(s map[string]any) {
			s["name_i18n_key"] = k
			for _, lang := range []string{"en", "it", "fr", "es"} {
				s["i18n"].(map[string]any)[lang].(map[string]any)["name"] = name
			}
		}
	}
	sidecarModule(t, dir, "one", service(t, "left_t", key("tools.shared.name", "Left")), service(t, "same_a", key("tools.same.name", "Same")))
	sidecarModule(t, dir, "two", service(t, "right_t", key("tools.shared.name", "Right")), service(t, "same_b", key("tools.same.name", "Same")))

	cfg, _ := config(t, dir)
	s := open(t, cfg).Snapshot()
	if got := codes(s); !slices.Equal(got, []string{"same_a", "same_b"}) {
		t.Errorf("services %v, want same_a and same_b", got)
	}
	want := []registry.Failure{
		{File: "one.wasm", ToolCode: "left_t", Reason: registry.ReasonDefinitionInvalid, Detail: registry.DetailI18nKeyConflict},
		{File: "two.wasm", ToolCode: "right_t", Reason: registry.ReasonDefinitionInvalid, Detail: registry.DetailI18nKeyConflict},
	}
	if got := s.Failures(); !slices.Equal(got, want) {
		t.Errorf("failures\n%+v\nwant\n%+v", got, want)
	}
}

// Refusals are per claim and sanitised; one bad service does not hide a
// healthy sibling; a module failed as a whole publishes nothing.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "garbage.wasm"), []byte("this is not WebAssembly"))
	age(t, filepath.Join(dir, "garbage.wasm"))
	// A module without describe and without a sidecar.
	writeFile(t, filepath.Join(dir, "bare.wasm"), vowelsWASM(t))
	age(t, filepath.Join(dir, "bare.wasm"))
	sidecarModule(t, dir, "mixed",
		service(t, "vowels", nil),
		service(t, "broken", func(s map[string]any) { s["ui"].(map[string]any)["kind"] = "widget" }),
		service(t, "catalog", nil),
		service(t, "strict", func(s map[string]any) {
			// A hard deadline shorter than the platform's output reserve
			// leaves no soft deadline once clamped.
			s["operations"].([]any)[0].(map[string]any)["hard_timeout_ms"] = 1
		}),
		service(t, "Bad-Code", nil),
	)
	cfg, logs := config(t, dir)
	r := open(t, cfg)
	s := r.Snapshot()

	want := []registry.Failure{
		{File: "bare.wasm", Reason: registry.ReasonImportFailed, Detail: "declaration_missing"},
		{File: "garbage.wasm", Reason: registry.ReasonImportFailed, Detail: "module_invalid"},
		{File: "mixed.wasm", Reason: registry.ReasonDefinitionInvalid, Detail: "tool_code_invalid"},
		{File: "mixed.wasm", ToolCode: "broken", Reason: registry.ReasonDefinitionInvalid, Detail: "ui_invalid"},
		{File: "mixed.wasm", ToolCode: "catalog", Reason: registry.ReasonReservedCode, Detail: "tool_code_invalid"},
	}
	if got := s.Failures(); !slices.Equal(got, want) {
		t.Errorf("failures\n%+v\nwant\n%+v", got, want)
	}
	noPath(t, s, dir)
	if got := codes(s); !slices.Equal(got, []string{"strict", "vowels"}) {
		t.Fatalf("services %v, want strict and vowels", got)
	}
	strict, _ := s.Service("strict")
	if strict.Unavailable == nil || strict.Unavailable.Code != toolerr.InvalidOperationPolicy || strict.Effective != nil {
		t.Errorf("strict: unavailable %v, effective %v; want invalid_operation_policy and none", strict.Unavailable, strict.Effective)
	}
	out, err := run(t, s, "vowels", `{"operation":"count","text":"Extism plugins run here"}`)
	if err != nil || string(out.Result) != `{"count":7}` {
		t.Errorf("vowels = %+v, %v", out, err)
	}
	// Reload loads the failed modules again; failing the same way, they
	// make no new generation.
	if again, err := r.Reload(context.Background()); err != nil || again != s {
		t.Errorf("Reload of the same failures = generation %d, %v", again.Generation(), err)
	}
	// The operator's log has the full causes, the path included.
	for _, text := range []string{filepath.Join(dir, "garbage.wasm"), "module_invalid", "ui_invalid", "route word"} {
		if !strings.Contains(logs.String(), text) {
			t.Errorf("the log lacks %q:\n%s", text, logs)
		}
	}
}

// stubRunner is a native package's runner: it answers every item with a
// fixed result and remembers the jobs.
type stubRunner struct{ jobs chan engine.Job }

func (s *stubRunner) Run(ctx context.Context, job engine.Job) (*engine.Outcome, error) {
	s.jobs <- job
	return &engine.Outcome{Result: []byte(`{"count":1}`)}, nil
}

// noExport makes a sidecar service a native one: a native declaration has
// none of a sidecar's per-operation members.
func noExport(s map[string]any) {
	for _, op := range s["operations"].([]any) {
		for _, k := range []string{"export", "input", "output"} {
			delete(op.(map[string]any), k)
		}
	}
}

// Builtins are packages like modules: published with their runner, checked
// the same way, and part of the same duplicate rule.
func TestBuiltins(t *testing.T) {
	native := &stubRunner{jobs: make(chan engine.Job, 1)}
	dir := t.TempDir()
	sidecarModule(t, dir, "clash", service(t, "shared", nil))
	cfg, _ := config(t, dir)
	cfg.Builtins = []registry.Builtin{
		{Name: "native", Runner: native, Declaration: declaration(t,
			service(t, "native_count", noExport),
			service(t, "shared", noExport),
			service(t, "compute", noExport))},
		{Name: "broken", Runner: native, Declaration: []byte(`{"contract_version":"1.0.0",`)},
	}
	s := open(t, cfg).Snapshot()

	want := []registry.Failure{
		{File: "builtin/broken", Reason: registry.ReasonImportFailed, Detail: "declaration_refused/declaration_not_json"},
		{File: "builtin/native", ToolCode: "compute", Reason: registry.ReasonReservedCode, Detail: "tool_code_invalid"},
		{File: "builtin/native", ToolCode: "shared", Reason: registry.ReasonDuplicateCode},
		{File: "clash.wasm", ToolCode: "shared", Reason: registry.ReasonDuplicateCode},
	}
	if got := s.Failures(); !slices.Equal(got, want) {
		t.Errorf("failures\n%+v\nwant\n%+v", got, want)
	}
	svc, ok := s.Service("native_count")
	if !ok || svc.Source != "builtin/native" || svc.Runner != engine.Runner(native) || svc.Unavailable != nil {
		t.Fatalf("native_count: %+v", svc)
	}
	eff, err := policy.Clamp(policy.DefaultPlatform(), policy.DefaultOperation("count"))
	if err != nil {
		t.Fatal(err)
	}
	eff.Deterministic = true
	if svc.Effective["count"] != eff {
		t.Errorf("effective %+v, want %+v", svc.Effective["count"], eff)
	}
	out, err := run(t, s, "native_count", `{"operation":"count","text":"a"}`)
	if err != nil || string(out.Result) != `{"count":1}` {
		t.Errorf("native_count = %+v, %v", out, err)
	}
	if j := <-native.jobs; j.ToolCode != "native_count" || j.Operation != eff {
		t.Errorf("the runner got %+v", j)
	}
}

// Only builtins, no folder.
func TestBuiltinsWithoutFolder(t *testing.T) {
	native := &stubRunner{jobs: make(chan engine.Job, 1)}
	decl := declaration(t, service(t, "native_count", noExport))
	r := open(t, registry.Config{
		Platform: policy.DefaultPlatform(),
		Builtins: []registry.Builtin{{Name: "native", Declaration: decl, Runner: native}},
	})
	if got := codes(r.Snapshot()); !slices.Equal(got, []string{"native_count"}) {
		t.Errorf("services %v", got)
	}
	if _, err := r.Reload(context.Background()); err != nil {
		t.Errorf("Reload: %v", err)
	}
}

// A builtin whose engine is missing is listed, unavailable, with the
// engine named; it is not a failure and it still claims its code.
func TestBuiltinMissingEngine(t *testing.T) {
	native := &stubRunner{jobs: make(chan engine.Job, 1)}
	decl := declaration(t, service(t, "native_count", noExport))
	r := open(t, registry.Config{
		Platform: policy.DefaultPlatform(),
		Builtins: []registry.Builtin{{Name: "native", Declaration: decl, Runner: native, MissingEngines: []string{"cbc"}}},
	})
	s := r.Snapshot()
	svc, ok := s.Service("native_count")
	if !ok || svc.Unavailable == nil || svc.Unavailable.Code != toolerr.ToolUnavailable {
		t.Fatalf("native_count: %+v", svc)
	}
	if is := svc.Unavailable.Issues; len(is) != 1 || is[0].Code != registry.IssueEngineMissing || !slices.Equal(is[0].Path, []string{"cbc"}) {
		t.Errorf("issues %+v", is)
	}
	if len(s.Failures()) != 0 {
		t.Errorf("failures %+v", s.Failures())
	}
}

func TestOpenRefusesBadConfig(t *testing.T) {
	native := &stubRunner{}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := policy.DefaultPlatform()
	bad.SoftTimeoutMS = 0
	tests := []struct {
		name string
		cfg  registry.Config
	}{
		{name: "folder without loader", cfg: registry.Config{Dir: t.TempDir(), Platform: policy.DefaultPlatform()}},
		{name: "incoherent platform", cfg: registry.Config{Platform: bad}},
		{name: "negative interval", cfg: registry.Config{Platform: policy.DefaultPlatform(), Interval: -1}},
		{name: "negative settle", cfg: registry.Config{Platform: policy.DefaultPlatform(), Settle: -1}},
		{name: "builtin name", cfg: registry.Config{Platform: policy.DefaultPlatform(), Builtins: []registry.Builtin{{Name: "a/b", Runner: native}}}},
		{name: "builtin repeated", cfg: registry.Config{Platform: policy.DefaultPlatform(), Builtins: []registry.Builtin{{Name: "a", Runner: native}, {Name: "a", Runner: native}}}},
		{name: "builtin without runner", cfg: registry.Config{Platform: policy.DefaultPlatform(), Builtins: []registry.Builtin{{Name: "a"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r, err := registry.Open(context.Background(), tt.cfg); !errors.Is(err, registry.ErrConfig) {
				if r != nil {
					r.Close(context.Background())
				}
				t.Fatalf("Open = %v, want ErrConfig", err)
			}
		})
	}
	for _, dir := range []string{filepath.Join(t.TempDir(), "missing"), file} {
		cfg, _ := config(t, dir)
		if r, err := registry.Open(context.Background(), cfg); err == nil {
			r.Close(context.Background())
			t.Errorf("Open(%s) succeeded", dir)
		}
	}
}
