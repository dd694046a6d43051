package tooldef

import (
	"errors"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/wire"
)

// Limits on a declaration.
const (
	// MaxDeclarationBytes bounds a declaration's JSON text.
	MaxDeclarationBytes = 4 << 20
	// MaxServices is the most services one package declares.
	MaxServices = 16
	// MaxCodeBytes bounds tool codes, categories and icon keys.
	MaxCodeBytes = 64
)

// RouteWords are tool codes that would collide with the seed-000 routes.
var RouteWords = []string{"catalog", "compute", "diagnostics"}

// Options says where a declaration comes from.
type Options struct {
	// Sidecar accepts the sidecar manifest form: each operation also names
	// the module "export" that computes it and may map its "input" and
	// "output"; the package and each service may carry an "extism" block.
	Sidecar bool
}

var (
	codePattern   = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	semverPattern = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)
	docSegment    = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	exportPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.$-]{0,127}$`)
	// componentKeyPattern is the shape of a renderer's component key: the
	// tool code format with hyphens too (the contract's pac-allocator),
	// never a URL or a path.
	componentKeyPattern = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
)

// MaxComponentKeyBytes is the longest component key.
const MaxComponentKeyBytes = 64

// ValidComponentKey reports whether s has the shape of a component key:
// an identifier of a source-owned compiled renderer, not a module URL
// (docs/contracts.md).
func ValidComponentKey(s string) bool {
	return len(s) <= MaxComponentKeyBytes && componentKeyPattern.MatchString(s)
}

// Decode decodes and checks a package declaration. A problem with the
// package as a whole (not strict JSON, versions, service count, shape of
// the top level) is returned as a *Refusal; a problem with one service is
// recorded on that service alone. Services are checked completely: shape,
// metadata, operation policies, the schema profile, and the fingerprint.
func Decode(data []byte, opts Options) (*Package, error) {
	doc, err := wire.Decode(data, wire.Limits{MaxBytes: MaxDeclarationBytes, MaxDepth: schema.MaxDepth})
	if err != nil {
		r := refuse(NotJSON, "", "not strict JSON")
		r.Cause = err
		return nil, r
	}
	top := objectAt(doc, "")
	p := &Package{
		ContractVersion:       top.str("contract_version"),
		ImplementationVersion: top.str("implementation_version"),
	}
	services := top.array("services")
	var extism any
	if opts.Sidecar {
		extism = top.optValue("extism")
	}
	if r := top.done(); r != nil {
		return nil, r
	}
	pkgExtism, r := decodeExtism(extism, "/extism")
	if r != nil {
		return nil, r
	}
	for _, v := range []struct{ name, value string }{
		{"contract_version", p.ContractVersion},
		{"implementation_version", p.ImplementationVersion},
	} {
		if !semverPattern.MatchString(v.value) {
			return nil, refuse(BadVersion, "/"+v.name, "not SemVer")
		}
	}
	if len(services) < 1 || len(services) > MaxServices {
		return nil, refuse(ServiceCount, "/services", "a package declares 1 to 16 services")
	}
	seen := map[string]int{}
	for i, sv := range services {
		d := decodeService(sv, index("/services", i), opts, pkgExtism)
		if d.Definition != nil {
			d.Definition.ContractVersion = p.ContractVersion
			d.Definition.ImplementationVersion = p.ImplementationVersion
		}
		if d.ToolCode != "" {
			if first, dup := seen[d.ToolCode]; dup {
				// Both claimants of a repeated code are refused.
				r := refuse(DuplicateToolCode, index("/services", i)+"/tool_code", "declared twice in one package")
				p.Services[first] = Declared{ToolCode: d.ToolCode, Refusal: r}
				d = Declared{ToolCode: d.ToolCode, Refusal: r}
			}
			seen[d.ToolCode] = i
		}
		p.Services = append(p.Services, d)
	}
	return p, nil
}

func decodeService(v any, path string, opts Options, pkgExtism extismBlock) Declared {
	f := objectAt(v, path)
	def := &Definition{
		ToolCode:           f.str("tool_code"),
		Name:               f.str("name"),
		Description:        f.str("description"),
		NameI18nKey:        f.optStr("name_i18n_key"),
		DescriptionI18nKey: f.optStr("description_i18n_key"),
		Category:           f.str("category"),
		IconKey:            f.str("icon_key"),
	}
	decl := Declared{}
	if validCode(def.ToolCode) {
		decl.ToolCode = def.ToolCode
	}
	i18n := f.object("i18n")
	def.I18n = map[string]Text{}
	for _, lang := range Languages {
		t := i18n.object(lang)
		def.I18n[lang] = Text{Name: t.str("name"), Description: t.str("description")}
		if r := t.done(); r != nil && f.err == nil {
			f.err = r
		}
	}
	if r := i18n.done(); r != nil && f.err == nil {
		f.err = r
		f.err.Reason = BadI18n
	}
	ui := f.object("ui")
	def.UI = UI{Kind: ui.str("kind"), ComponentKey: ui.str("component_key"), Version: ui.str("version")}
	if r := ui.done(); r != nil && f.err == nil {
		f.err = r
	}
	doc := f.object("documentation")
	def.Documentation = Documentation{Path: doc.str("path"), Version: doc.str("version")}
	if r := doc.done(); r != nil && f.err == nil {
		f.err = r
	}
	ops := f.array("operations")
	def.InputSchema = f.value("input_schema")
	def.OutputSchema = f.value("output_schema")
	platform := f.optValue("platform")
	var extism any
	if opts.Sidecar {
		extism = f.optValue("extism")
	}
	if r := f.done(); r != nil {
		decl.Refusal = r
		return decl
	}
	if r := checkMetadata(def, path); r != nil {
		decl.Refusal = r
		return decl
	}
	if def.Operations, decl.Refusal = decodeOperations(ops, path+"/operations", opts); decl.Refusal != nil {
		return decl
	}
	names := def.OperationNames()
	if err := schema.Check(def.InputSchema, def.OutputSchema, names); err != nil {
		decl.Refusal = &Refusal{Reason: SchemaProfile, Path: path, Cause: err}
		return decl
	}
	fp, err := schema.Fingerprint(def.InputSchema, def.OutputSchema, names)
	if err != nil {
		decl.Refusal = &Refusal{Reason: SchemaProfile, Path: path, Detail: "fingerprint", Cause: err}
		return decl
	}
	def.Fingerprint = fp
	if def.Platform, decl.Refusal = decodePlatform(platform, path+"/platform", def); decl.Refusal != nil {
		return decl
	}
	if opts.Sidecar {
		if decl.Refusal = sidecarService(def, path, extism, pkgExtism); decl.Refusal != nil {
			return decl
		}
	}
	decl.Definition = def
	return decl
}

// sidecarService checks what a sidecar adds to a service: no egress, its
// extism block (v, nil when absent) over the package's, and its
// operations' mappings against its schemas.
func sidecarService(def *Definition, path string, v any, pkgExtism extismBlock) *Refusal {
	if r := checkSidecarPlatform(def.Platform, path+"/platform"); r != nil {
		return r
	}
	svc, r := decodeExtism(v, path+"/extism")
	if r != nil {
		return r
	}
	merged, r := merge(pkgExtism, svc)
	if r != nil {
		return r
	}
	if def.Extism, r = checkExtism(merged, def.Operations); r != nil {
		return r
	}
	return checkMappings(def, path+"/operations")
}

func validCode(s string) bool {
	return len(s) <= MaxCodeBytes && codePattern.MatchString(s)
}

// checkMetadata applies the contract's metadata rules to a service.
func checkMetadata(d *Definition, path string) *Refusal {
	switch {
	case !validCode(d.ToolCode):
		return refuse(BadToolCode, path+"/tool_code", "must match [a-z][a-z0-9_]* with at most 64 bytes")
	case slices.Contains(RouteWords, d.ToolCode):
		return refuse(BadToolCode, path+"/tool_code", "a route word cannot be a tool code")
	case strings.TrimSpace(d.Name) == "":
		return refuse(MissingText, path+"/name", "empty")
	case strings.TrimSpace(d.Description) == "":
		return refuse(MissingText, path+"/description", "empty")
	case d.NameI18nKey != nil && *d.NameI18nKey == "":
		return refuse(BadI18n, path+"/name_i18n_key", "empty key")
	case d.DescriptionI18nKey != nil && *d.DescriptionI18nKey == "":
		return refuse(BadI18n, path+"/description_i18n_key", "empty key")
	case !validCode(d.Category):
		return refuse(BadIdentifier, path+"/category", "must use the tool code format")
	case !validCode(d.IconKey):
		return refuse(BadIdentifier, path+"/icon_key", "must use the tool code format")
	case d.UI.Kind != "custom":
		return refuse(BadUI, path+"/ui/kind", `must be "custom"`)
	case strings.TrimSpace(d.UI.ComponentKey) == "":
		return refuse(BadUI, path+"/ui/component_key", "empty")
	case !ValidComponentKey(d.UI.ComponentKey):
		return refuse(BadUI, path+"/ui/component_key", "not a component key: [a-z][a-z0-9_-]*, at most 64 bytes")
	case !semverPattern.MatchString(d.UI.Version):
		return refuse(BadVersion, path+"/ui/version", "not SemVer")
	case !semverPattern.MatchString(d.Documentation.Version):
		return refuse(BadVersion, path+"/documentation/version", "not SemVer")
	case !ValidDocumentationPath(d.Documentation.Path):
		return refuse(BadDocumentation, path+"/documentation/path", "not a relative documentation route")
	}
	for _, lang := range Languages {
		t := d.I18n[lang]
		if strings.TrimSpace(t.Name) == "" || strings.TrimSpace(t.Description) == "" {
			return refuse(BadI18n, path+"/i18n/"+lang, "empty text")
		}
	}
	return nil
}

// ValidDocumentationPath reports whether p is a documentation route: a
// relative, extensionless path of /-separated segments of letters, digits,
// - and _, with an optional trailing slash, not starting with /, mkdocs/ or
// a language prefix (en/, it/, fr/, es/).
func ValidDocumentationPath(p string) bool {
	trimmed := strings.TrimSuffix(p, "/")
	if trimmed == "" {
		return false
	}
	segments := strings.Split(trimmed, "/")
	if first := segments[0]; first == "mkdocs" || slices.Contains(Languages, first) {
		return false
	}
	for _, s := range segments {
		if !docSegment.MatchString(s) {
			return false
		}
	}
	return true
}

// decodeOperations decodes the operation policies: each overlays the model
// defaults and passes policy validation; names are unique. In sidecar form
// each also names its export.
func decodeOperations(ops []any, path string, opts Options) ([]Operation, *Refusal) {
	if len(ops) == 0 {
		return nil, refuse(BadOperation, path, "no operations")
	}
	out := make([]Operation, 0, len(ops))
	seen := map[string]bool{}
	for i, v := range ops {
		at := index(path, i)
		m, ok := v.(map[string]any)
		if !ok {
			return nil, refuse(BadShape, at, "not an object")
		}
		var export string
		var input, output Mapping
		if opts.Sidecar {
			e, isString := m["export"].(string)
			if !isString || !exportPattern.MatchString(e) {
				return nil, refuse(BadExport, at+"/export", "each operation names the export that computes it")
			}
			export = e
			var r *Refusal
			if input, r = decodeMapping(m["input"], at+"/input", true); r != nil {
				return nil, r
			}
			if output, r = decodeMapping(m["output"], at+"/output", false); r != nil {
				return nil, r
			}
			m = without(m, "export", "input", "output")
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !operationFields[k] {
				r := unknownField(at, k)
				r.Reason = BadOperation
				return nil, r
			}
		}
		text, err := wire.Encode(m, wire.Limits{})
		if err != nil {
			return nil, refuse(BadShape, at, "not encodable")
		}
		op, err := policy.DecodeOperation(text)
		if err != nil {
			r := refuse(BadOperation, at, "")
			var oe *policy.OperationError
			if errors.As(err, &oe) {
				r.Detail = string(oe.Rule)
				if oe.Field != "" {
					r.Path = at + "/" + escapePointer(oe.Field)
				}
			}
			r.Cause = err
			return nil, r
		}
		if seen[op.Name] {
			return nil, refuse(BadOperation, at+"/operation", "operation declared twice")
		}
		seen[op.Name] = true
		out = append(out, Operation{Policy: op, Export: export, Input: input, Output: output})
	}
	return out, nil
}

// without returns m without the named keys.
func without(m map[string]any, drop ...string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !slices.Contains(drop, k) {
			out[k] = v
		}
	}
	return out
}

// operationFields are the members of an operation policy
// (policy.Operation's JSON names).
var operationFields = func() map[string]bool {
	m := map[string]bool{}
	t := reflect.TypeFor[policy.Operation]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		m[name] = true
	}
	return m
}()
