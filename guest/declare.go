//go:build !guestgen

package guest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Declaration limits (docs/guest-abi.md).
const (
	maxServices      = 16
	maxIdentifierLen = 64
)

// languages are the i18n languages a service declares, exactly.
var languages = []string{"en", "it", "fr", "es"}

// check reports the first metadata rule m breaks.
func (m serviceMeta) check() error {
	switch {
	case !identifier(m.code) || m.code == "catalog" || m.code == "compute" || m.code == "diagnostics":
		return fmt.Errorf("tool_code %q must match [a-z][a-z0-9_]* (at most 64 bytes) and not be catalog, compute or diagnostics", m.code)
	case m.name == "" || m.description == "":
		return errors.New("name and description must not be empty")
	case !identifier(m.category):
		return fmt.Errorf("category %q must match [a-z][a-z0-9_]* (at most 64 bytes)", m.category)
	case !identifier(m.iconKey):
		return fmt.Errorf("icon_key %q must match [a-z][a-z0-9_]* (at most 64 bytes)", m.iconKey)
	case m.ui.Kind != "" && m.ui.Kind != "custom":
		return fmt.Errorf("ui.kind %q must be \"custom\"", m.ui.Kind)
	case m.ui.ComponentKey == "":
		return errors.New("ui.component_key must not be empty")
	case !semver(m.ui.Version):
		return fmt.Errorf("ui.version %q is not a SemVer string", m.ui.Version)
	case !docPath(m.documentation.Path):
		return fmt.Errorf("documentation.path %q must be relative and extensionless: /-separated segments of letters, digits, - and _, not starting with /, mkdocs/ or a language (en/, it/, fr/, es/)", m.documentation.Path)
	case !semver(m.documentation.Version):
		return fmt.Errorf("documentation.version %q is not a SemVer string", m.documentation.Version)
	case !m.hasCompute:
		return errors.New("the Service's Compute is nil")
	}
	if err := m.platform.check(); err != nil {
		return fmt.Errorf("platform: %w", err)
	}
	if len(m.texts) != len(languages) {
		return errors.New("texts must hold exactly en, it, fr and es")
	}
	for _, lang := range languages {
		t, ok := m.texts[lang]
		if !ok {
			return errors.New("texts must hold exactly en, it, fr and es")
		}
		if t.Name == "" || t.Description == "" {
			return fmt.Errorf("texts[%q] has an empty name or description", lang)
		}
	}
	if len(m.operations) == 0 {
		return errors.New("no operations: declare at least one")
	}
	seen := map[string]bool{}
	for i, op := range m.operations {
		if !identifier(op.Name) {
			return fmt.Errorf("operations[%d]: name %q must match [a-z][a-z0-9_]* (at most 64 bytes)", i, op.Name)
		}
		if seen[op.Name] {
			return fmt.Errorf("operations[%d]: %q is declared twice", i, op.Name)
		}
		seen[op.Name] = true
		for _, l := range op.limits() {
			if l.value < 0 {
				return fmt.Errorf("operations[%d] (%q): %s is negative (zero means the model default)", i, op.Name, l.field)
			}
		}
	}
	return nil
}

// check reports the first rule p breaks that the SDK can tell alone; the
// host checks the rest (docs/contracts.md). A nil p declares nothing.
func (p *Platform) check() error {
	if p == nil {
		return nil
	}
	switch {
	case p.Status != "" && p.Status != "stable" && p.Status != "beta" && p.Status != "preview" && p.Status != "unavailable":
		return fmt.Errorf("status %q must be stable, beta, preview or unavailable", p.Status)
	case (p.Status == "unavailable") != (p.StatusReason != ""):
		return errors.New("status unavailable has a StatusReason, and only it")
	case p.Execution != "" && p.Execution != "client" && p.Execution != "sync" && p.Execution != "job":
		return fmt.Errorf("execution %q must be client, sync or job", p.Execution)
	case p.Job != nil && p.Execution != "job":
		return errors.New("only a job tool (Execution \"job\") names a Job")
	case p.Job == nil && p.Execution == "job" && !p.PageOnly:
		return errors.New("a job tool in the API names its Job")
	case p.Cost < 0 || p.PerTargetPerMinute < 0:
		return errors.New("neither Cost nor PerTargetPerMinute may be negative")
	}
	return nil
}

// identifier reports whether s matches [a-z][a-z0-9_]* of at most 64 bytes.
func identifier(s string) bool {
	if s == "" || len(s) > maxIdentifierLen || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// docPath reports whether p is a documentation path: relative,
// extensionless, /-separated segments of [A-Za-z0-9_-] with an optional
// trailing slash, whose first segment is not mkdocs or a language.
func docPath(p string) bool {
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return false
	}
	segs := strings.Split(p, "/")
	switch segs[0] {
	case "mkdocs", "en", "it", "fr", "es":
		return false
	}
	for _, seg := range segs {
		if seg == "" {
			return false
		}
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			if plain := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'; !plain {
				return false
			}
		}
	}
	return true
}

// semverRE is the SemVer 2.0.0 grammar, compiled on first use so that an
// instance's initialiser does not pay for it.
var semverRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
		`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
		`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)
})

func semver(s string) bool { return semverRE().MatchString(s) }

type limit struct {
	field string
	value int64
}

func (op Operation) limits() []limit {
	return []limit{
		{"max_parameter_bytes", op.MaxParameterBytes},
		{"max_result_bytes", op.MaxResultBytes},
		{"queue_timeout_ms", op.QueueTimeoutMS},
		{"engine_timeout_ms", op.EngineTimeoutMS},
		{"soft_timeout_ms", op.SoftTimeoutMS},
		{"hard_timeout_ms", op.HardTimeoutMS},
		{"cleanup_timeout_ms", op.CleanupTimeoutMS},
		{"request_timeout_ms", op.RequestTimeoutMS},
		{"client_timeout_ms", op.ClientTimeoutMS},
		{"memory_limit_bytes", op.MemoryLimitBytes},
	}
}

// The declaration document, in the field order of docs/guest-abi.md.
type (
	packageJSON struct {
		ContractVersion       string         `json:"contract_version"`
		ImplementationVersion string         `json:"implementation_version"`
		Services              []*serviceJSON `json:"services"`
	}
	serviceJSON struct {
		ToolCode       string              `json:"tool_code"`
		Name           string              `json:"name"`
		Description    string              `json:"description"`
		NameKey        string              `json:"name_i18n_key,omitempty"`
		DescriptionKey string              `json:"description_i18n_key,omitempty"`
		I18n           map[string]textJSON `json:"i18n"`
		Category       string              `json:"category"`
		IconKey        string              `json:"icon_key"`
		UI             uiJSON              `json:"ui"`
		Documentation  documentationJSON   `json:"documentation"`
		Operations     []operationJSON     `json:"operations"`
		InputSchema    map[string]any      `json:"input_schema"`
		OutputSchema   map[string]any      `json:"output_schema"`
		Platform       *platformJSON       `json:"platform,omitempty"`
	}
	// platformJSON leaves zero fields out: they take the host's default.
	platformJSON struct {
		Status             string       `json:"status,omitempty"`
		StatusReason       string       `json:"status_reason,omitempty"`
		Execution          string       `json:"execution,omitempty"`
		API                *bool        `json:"api,omitempty"`
		Job                *jobJSON     `json:"job,omitempty"`
		Legacy             []legacyJSON `json:"legacy,omitempty"`
		Files              []fileJSON   `json:"files,omitempty"`
		OutputFiles        bool         `json:"output_files,omitempty"`
		Anonymous          *bool        `json:"anonymous,omitempty"`
		Capability         string       `json:"capability,omitempty"`
		QuotaClass         string       `json:"quota_class,omitempty"`
		Cost               int          `json:"cost,omitempty"`
		Egress             bool         `json:"egress,omitempty"`
		Hosts              []string     `json:"hosts,omitempty"`
		PerTargetPerMinute int          `json:"per_target_per_minute,omitempty"`
	}
	jobJSON struct {
		Type      string         `json:"type"`
		Operation string         `json:"operation"`
		Preset    map[string]any `json:"preset,omitempty"`
	}
	legacyJSON struct {
		Method    string `json:"method"`
		Path      string `json:"path"`
		Operation string `json:"operation,omitempty"`
		Selector  string `json:"selector,omitempty"`
	}
	fileJSON struct {
		Name     string   `json:"name"`
		Types    []string `json:"types"`
		MaxBytes int64    `json:"max_bytes"`
	}
	textJSON struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	uiJSON struct {
		Kind         string `json:"kind"`
		ComponentKey string `json:"component_key"`
		Version      string `json:"version"`
	}
	documentationJSON struct {
		Path    string `json:"path"`
		Version string `json:"version"`
	}
	// operationJSON leaves zero limits out: they take the model default.
	operationJSON struct {
		Operation         string `json:"operation"`
		Deterministic     bool   `json:"deterministic"`
		MaxParameterBytes int64  `json:"max_parameter_bytes,omitempty"`
		MaxResultBytes    int64  `json:"max_result_bytes,omitempty"`
		QueueTimeoutMS    int64  `json:"queue_timeout_ms,omitempty"`
		EngineTimeoutMS   int64  `json:"engine_timeout_ms,omitempty"`
		SoftTimeoutMS     int64  `json:"soft_timeout_ms,omitempty"`
		HardTimeoutMS     int64  `json:"hard_timeout_ms,omitempty"`
		CleanupTimeoutMS  int64  `json:"cleanup_timeout_ms,omitempty"`
		RequestTimeoutMS  int64  `json:"request_timeout_ms,omitempty"`
		ClientTimeoutMS   int64  `json:"client_timeout_ms,omitempty"`
		MemoryLimitBytes  int64  `json:"memory_limit_bytes,omitempty"`
	}
)

// describe builds the service's declaration, schemas included.
func (svc *service) describe(m serviceMeta) {
	svc.decl = m.declaration()
	svc.decl.InputSchema = inputSchema(svc.in, svc.ops)
	svc.decl.OutputSchema = outputSchema(svc.out, svc.ops)
}

func (m serviceMeta) declaration() *serviceJSON {
	d := &serviceJSON{
		ToolCode: m.code, Name: m.name, Description: m.description,
		NameKey: m.nameKey, DescriptionKey: m.descriptionKey,
		I18n:     map[string]textJSON{},
		Category: m.category, IconKey: m.iconKey,
		UI:            uiJSON{Kind: "custom", ComponentKey: m.ui.ComponentKey, Version: m.ui.Version},
		Documentation: documentationJSON{Path: m.documentation.Path, Version: m.documentation.Version},
	}
	for lang, t := range m.texts {
		d.I18n[lang] = textJSON(t)
	}
	for _, op := range m.operations {
		d.Operations = append(d.Operations, operationJSON{
			Operation: op.Name, Deterministic: op.Deterministic,
			MaxParameterBytes: op.MaxParameterBytes, MaxResultBytes: op.MaxResultBytes,
			QueueTimeoutMS: op.QueueTimeoutMS, EngineTimeoutMS: op.EngineTimeoutMS,
			SoftTimeoutMS: op.SoftTimeoutMS, HardTimeoutMS: op.HardTimeoutMS,
			CleanupTimeoutMS: op.CleanupTimeoutMS, RequestTimeoutMS: op.RequestTimeoutMS,
			ClientTimeoutMS: op.ClientTimeoutMS, MemoryLimitBytes: op.MemoryLimitBytes,
		})
	}
	if p := m.platform; p != nil {
		d.Platform = p.declaration()
	}
	return d
}

// declaration returns the platform block, zero fields left out.
func (p *Platform) declaration() *platformJSON {
	no := false
	d := &platformJSON{
		Status: p.Status, StatusReason: p.StatusReason, Execution: p.Execution,
		OutputFiles: p.OutputFiles, Capability: p.Capability, QuotaClass: p.QuotaClass,
		Cost: p.Cost, Egress: p.Egress, Hosts: p.Hosts, PerTargetPerMinute: p.PerTargetPerMinute,
	}
	if p.PageOnly {
		d.API = &no
	}
	if p.RequireCaller {
		d.Anonymous = &no
	}
	if p.Job != nil {
		d.Job = &jobJSON{Type: p.Job.Type, Operation: p.Job.Operation, Preset: p.Job.Preset}
	}
	for _, l := range p.Legacy {
		d.Legacy = append(d.Legacy, legacyJSON(l))
	}
	for _, f := range p.Files {
		d.Files = append(d.Files, fileJSON(f))
	}
	return d
}

// declare checks p with every service's types and returns its declaration
// document, or the first rule broken.
func declare(p Package) ([]byte, error) {
	if !semver(p.ContractVersion) {
		return nil, fmt.Errorf("contract_version %q is not a SemVer string", p.ContractVersion)
	}
	if !semver(p.ImplementationVersion) {
		return nil, fmt.Errorf("implementation_version %q is not a SemVer string", p.ImplementationVersion)
	}
	if len(p.Services) < 1 || len(p.Services) > maxServices {
		return nil, fmt.Errorf("a package declares 1 to %d services, not %d", maxServices, len(p.Services))
	}
	doc := packageJSON{ContractVersion: p.ContractVersion, ImplementationVersion: p.ImplementationVersion}
	codes := map[string]bool{}
	for i, d := range p.Services {
		if d == nil {
			return nil, fmt.Errorf("services[%d] is nil", i)
		}
		svc, err := d.compile(true)
		if err != nil {
			return nil, fmt.Errorf("services[%d] (%q): %w", i, d.toolCode(), err)
		}
		if codes[svc.code] {
			return nil, fmt.Errorf("services[%d]: tool_code %q is declared twice", i, svc.code)
		}
		codes[svc.code] = true
		doc.Services = append(doc.Services, svc.decl)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encoding the declaration: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// describeRegistered returns the declaration of the registered package p:
// derived, and refused as stale when it differs from gen, guestgen's
// document for it ("" when there is none).
func describeRegistered(p Package, gen string) ([]byte, error) {
	doc, err := declare(p)
	if err == nil && gen != "" && string(doc) != gen {
		return nil, errStale
	}
	return doc, err
}
