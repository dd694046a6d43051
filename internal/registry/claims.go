package registry

import (
	"errors"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

// pkg is what one package brings to a discovery: either a failure of the
// package as a whole, which makes no claims, or its claims, one per
// declared service. A pkg is built once when its package is loaded and is
// immutable afterwards, so that an unchanged file brings the same pkg to
// every later discovery.
type pkg struct {
	source string   // "<name>.wasm" or "builtin/<name>"
	failed *Failure // the package failed as a whole
	claims []claim
}

// claim is one declared service: usable (available or not), or refused on
// its own. code is empty when the declaration had no readable tool code.
type claim struct {
	code    string
	service *Service
	refused *Failure
}

// codePattern is the stable-code shape a Detail may carry.
var codePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// failedPkg is a package refused as a whole that still claims the codes
// its declaration names (a module whose sidecar declares them): the claims
// of a failed import count in the duplicate check, and can never publish a
// service.
func failedPkg(source string, f *Failure, codes []string) *pkg {
	p := &pkg{source: source, failed: f}
	for _, c := range codes {
		p.claims = append(p.claims, claim{code: c})
	}
	return p
}

// maxDeclarationBytes bounds the declaration declaredCodes reads.
const maxDeclarationBytes = 1 << 20

// declaredCodes returns the distinct tool codes a package declaration
// (a sidecar manifest, a builtin's declaration) names under
// services[].tool_code, in the code shape, at most [tooldef.MaxServices]
// of them; nil when the document is absent or not a readable declaration.
// It reads nothing else: the declaration may be refused for any other
// reason and its codes still claim.
func declaredCodes(decl []byte) []string {
	if len(decl) == 0 || len(decl) > maxDeclarationBytes {
		return nil
	}
	doc, err := wire.Decode(decl, wire.Limits{MaxBytes: maxDeclarationBytes, MaxDepth: wire.DefaultMaxDepth})
	if err != nil {
		return nil
	}
	m, _ := doc.(map[string]any)
	services, _ := m["services"].([]any)
	var codes []string
	for _, s := range services {
		sm, _ := s.(map[string]any)
		code, _ := sm["tool_code"].(string)
		if len(code) <= 64 && codePattern.MatchString(code) && !slices.Contains(codes, code) && len(codes) < tooldef.MaxServices {
			codes = append(codes, code)
		}
	}
	return codes
}

// transact is the discovery transaction over every package's claims: it
// quarantines every claimant of a code claimed more than once (whatever
// else is wrong with the claim), publishes the other usable services, and
// reports every refusal. It logs the quarantines. A failed package's claims
// count as claims: its duplicated codes are reported duplicate_code before
// its own import_failed (the contract's resolution order), and it
// publishes nothing.
func transact(generation uint64, pkgs []*pkg, log *slog.Logger) *Snapshot {
	claimants := map[string][]string{} // code → sources, one per claim
	for _, p := range pkgs {
		for _, c := range p.claims {
			if c.code != "" {
				claimants[c.code] = append(claimants[c.code], p.source)
			}
		}
	}
	conflicts := i18nConflicts(pkgs, claimants)
	var services []*Service
	var failures []Failure
	for _, p := range pkgs {
		if p.failed != nil {
			for _, c := range p.claims {
				if len(claimants[c.code]) > 1 {
					failures = append(failures, Failure{File: p.source, ToolCode: c.code, Reason: ReasonDuplicateCode})
				}
			}
			failures = append(failures, *p.failed)
			continue
		}
		for _, c := range p.claims {
			switch {
			case len(claimants[c.code]) > 1:
				failures = append(failures, Failure{File: p.source, ToolCode: c.code, Reason: ReasonDuplicateCode})
			case c.refused != nil:
				failures = append(failures, *c.refused)
			case conflicts[c.service]:
				failures = append(failures, Failure{File: p.source, ToolCode: c.code, Reason: ReasonDefinitionInvalid, Detail: DetailI18nKeyConflict})
			default:
				services = append(services, c.service)
			}
		}
	}
	codes := make([]string, 0, len(claimants))
	for code, sources := range claimants {
		if len(sources) > 1 {
			codes = append(codes, code)
		}
	}
	slices.Sort(codes)
	for _, code := range codes {
		log.Warn("registry: tool code claimed more than once; every claimant is quarantined",
			"tool_code", code, "claimants", claimants[code])
	}
	for svc := range conflicts {
		log.Warn("registry: an i18n key of the service has other texts in another service; every service publishing it is refused",
			"file", svc.Source, "tool_code", svc.Code())
	}
	return NewSnapshot(generation, services, failures)
}

// DetailI18nKeyConflict is the detail of a service refused
// (definition_invalid) because one of its i18n keys is published by another
// service with other texts.
const DetailI18nKeyConflict = "i18n_key_conflict"

// i18nConflicts returns the services, among the claims that would publish
// (not refused, not a duplicate code), that carry a name_i18n_key or
// description_i18n_key another such service carries with other texts in
// some language. Like a duplicate code, a conflicting key has no winner:
// every service publishing it is refused, since a translation catalogue
// keyed by it could show only one of the texts. The same key with the
// same texts is one translation and is no conflict.
func i18nConflicts(pkgs []*pkg, claimants map[string][]string) map[*Service]bool {
	type use struct {
		svc   *Service
		texts [4]string // in tooldef.Languages order
	}
	uses := map[string][]use{}
	for _, p := range pkgs {
		if p.failed != nil {
			continue
		}
		for _, c := range p.claims {
			if c.service == nil || len(claimants[c.code]) > 1 {
				continue
			}
			d := c.service.Definition
			add := func(key *string, text func(tooldef.Text) string) {
				if key == nil {
					return
				}
				var u use
				u.svc = c.service
				for i, lang := range tooldef.Languages[:len(u.texts)] {
					u.texts[i] = text(d.I18n[lang])
				}
				uses[*key] = append(uses[*key], u)
			}
			add(d.NameI18nKey, func(t tooldef.Text) string { return t.Name })
			add(d.DescriptionI18nKey, func(t tooldef.Text) string { return t.Description })
		}
	}
	conflicts := map[*Service]bool{}
	for _, us := range uses {
		for _, u := range us[1:] {
			if u.texts != us[0].texts {
				for _, v := range us {
					conflicts[v.svc] = true
				}
				break
			}
		}
	}
	return conflicts
}

// moduleFailure is the failure of a module refused as a whole: import_failed
// with the load reason as Detail, refined by the lower layer's code when it
// has one ("declaration_refused/version_invalid", "load_timeout/describe",
// "module_limits/br_table_targets"). An error that is not a [LoadRefusal]
// (the file could not be stat'ed or read) is "unreadable".
func moduleFailure(source string, err error) *Failure {
	detail := "unreadable"
	var lr LoadRefusal
	if errors.As(err, &lr) {
		reason, finer := lr.Refusal()
		detail = reason
		if codePattern.MatchString(finer) {
			detail += "/" + finer
		}
	}
	return &Failure{File: source, Reason: ReasonImportFailed, Detail: detail}
}

// refusal is the failure of a service refused on its own: reserved_code
// when it claims a route word (whatever else is wrong with it), otherwise
// definition_invalid; Detail is tooldef's reason code.
func refusal(source, code string, r *tooldef.Refusal) *Failure {
	reason := ReasonDefinitionInvalid
	if slices.Contains(tooldef.RouteWords, code) {
		reason = ReasonReservedCode
	}
	return &Failure{File: source, ToolCode: code, Reason: reason, Detail: string(r.Reason)}
}

// unavailable is the platform error of a service whose operation policy
// cannot be clamped.
func unavailable(err error) *toolerr.Error {
	var te *toolerr.Error
	if errors.As(err, &te) && te.Code == toolerr.InvalidOperationPolicy {
		return te
	}
	return toolerr.New(toolerr.InvalidOperationPolicy)
}

// modulePkg expands a loaded module into its claims. Every refusal is
// logged with its full cause for the operator.
func modulePkg(source string, m *module, log *slog.Logger) *pkg {
	p := &pkg{source: source}
	for _, s := range m.tool.Services() {
		if s.Refusal != nil {
			log.Warn("registry: service refused", "file", source, "tool_code", s.ToolCode,
				"reason", s.Refusal.Reason, "error", s.Refusal)
			p.claims = append(p.claims, claim{code: s.ToolCode, refused: refusal(source, s.ToolCode, s.Refusal)})
			continue
		}
		svc := &Service{Definition: s.Definition, Source: source, Runner: &wasmRunner{mod: m, svc: s}}
		if s.Unavailable != nil {
			log.Warn("registry: service unavailable: an operation policy cannot be clamped to the platform",
				"file", source, "tool_code", s.ToolCode, "error", s.Unavailable)
			svc.Unavailable = unavailable(s.Unavailable)
		} else {
			svc.Effective = map[string]policy.Effective{}
			for _, op := range s.Definition.OperationNames() {
				svc.Effective[op] = s.Effective[op]
			}
		}
		p.claims = append(p.claims, claim{code: s.ToolCode, service: svc})
	}
	return p
}

// builtinPkg decodes and checks a builtin package as the WASM loader checks
// a module's declaration: the declaration, each service's schemas, and
// each operation's clamp to the platform.
func builtinPkg(b Builtin, platform policy.Platform, log *slog.Logger) *pkg {
	source := "builtin/" + b.Name
	p := &pkg{source: source}
	decl, err := tooldef.Decode(b.Declaration, tooldef.Options{})
	if err != nil {
		log.Error("registry: builtin package refused", "package", source, "error", err)
		detail := DeclarationRefused
		var r *tooldef.Refusal
		if errors.As(err, &r) {
			detail += "/" + string(r.Reason)
		}
		return failedPkg(source, &Failure{File: source, Reason: ReasonImportFailed, Detail: detail}, declaredCodes(b.Declaration))
	}
	for _, d := range decl.Services {
		r := d.Refusal
		if r == nil {
			r = compileSchemas(d.Definition)
		}
		if r != nil {
			log.Error("registry: builtin service refused", "package", source, "tool_code", d.ToolCode,
				"reason", r.Reason, "error", r)
			p.claims = append(p.claims, claim{code: d.ToolCode, refused: refusal(source, d.ToolCode, r)})
			continue
		}
		svc := &Service{Definition: d.Definition, Source: source, Runner: b.Runner}
		effective := map[string]policy.Effective{}
		for _, op := range d.Definition.Operations {
			eff, err := policy.Clamp(platform, op.Policy)
			if err != nil {
				log.Error("registry: builtin service unavailable: an operation policy cannot be clamped to the platform",
					"package", source, "tool_code", d.ToolCode, "error", err)
				svc.Unavailable = unavailable(err)
				effective = nil
				break
			}
			effective[op.Policy.Name] = eff
		}
		svc.Effective = effective
		if len(b.MissingEngines) > 0 && svc.Unavailable == nil {
			log.Warn("registry: builtin service unavailable: its engines are missing on this host",
				"package", source, "tool_code", d.ToolCode, "missing", b.MissingEngines)
			issues := make([]toolerr.Issue, len(b.MissingEngines))
			for i, e := range b.MissingEngines {
				issues[i] = toolerr.NewIssue(IssueEngineMissing, e)
			}
			svc.Unavailable = toolerr.New(toolerr.ToolUnavailable, issues...)
		}
		p.claims = append(p.claims, claim{code: d.ToolCode, service: svc})
	}
	return p
}

// compileSchemas refuses a definition whose schemas do not compile, as the
// WASM loader does.
func compileSchemas(d *tooldef.Definition) *tooldef.Refusal {
	for _, s := range []struct {
		path   string
		schema any
	}{{"input_schema", d.InputSchema}, {"output_schema", d.OutputSchema}} {
		if _, err := schema.Compile(s.schema); err != nil {
			return &tooldef.Refusal{Reason: tooldef.SchemaProfile, Path: s.path, Cause: err}
		}
	}
	return nil
}

// fileSource is the sanitised source of a module file: its base name, with
// invalid UTF-8 and control or format characters replaced by "_". It never
// carries a directory.
func fileSource(name string) string {
	name = strings.ToValidUTF8(name, "_")
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return '_'
		}
		return r
	}, name)
}
