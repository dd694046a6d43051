package tooldef

import (
	"errors"
	"fmt"
)

// Reason is the stable code of a declaration refusal.
type Reason string

// The refusals.
const (
	// NotJSON: the declaration is not strict JSON (duplicates, bad UTF-8, …).
	NotJSON Reason = "declaration_not_json"
	// BadShape: a field is missing, unknown, repeated, null where it may
	// not be, or of the wrong type.
	BadShape Reason = "declaration_shape"
	// BadVersion: contract_version, implementation_version, ui.version or
	// documentation.version is not a SemVer string.
	BadVersion Reason = "version_invalid"
	// ServiceCount: not 1 to 16 services.
	ServiceCount Reason = "service_count"
	// BadToolCode: a tool_code not matching [a-z][a-z0-9_]* of ≤ 64 bytes,
	// or a route word (catalog, compute, diagnostics).
	BadToolCode Reason = "tool_code_invalid"
	// DuplicateToolCode: one package declares a tool_code twice.
	DuplicateToolCode Reason = "tool_code_duplicate"
	// MissingText: an empty name or description.
	MissingText Reason = "metadata_missing"
	// BadI18n: i18n lacks one of en, it, fr, es, has another language, or a
	// text is empty; or an i18n key is empty when present.
	BadI18n Reason = "i18n_invalid"
	// BadIdentifier: category or icon_key not in the tool-code format.
	BadIdentifier Reason = "identifier_invalid"
	// BadUI: ui.kind is not "custom", or component_key is empty or not a
	// component key (a URL, a path).
	BadUI Reason = "ui_invalid"
	// BadDocumentation: documentation.path breaks the path rules.
	BadDocumentation Reason = "documentation_invalid"
	// BadOperation: an operation policy is refused (its rule is in the
	// detail), or the operations are empty or repeat a name.
	BadOperation Reason = "operation_invalid"
	// SchemaProfile: the schemas fail the schema profile; the violations
	// are in Violations.
	SchemaProfile Reason = "schema_profile"
	// BadPlatform: the platform block (ADR-027's descriptor fields) breaks
	// a rule; the detail names it — a fixed text, or the code of the
	// [CheckPlatform] finding the block makes.
	BadPlatform Reason = "platform_invalid"
	// BadExport: a sidecar maps an operation to an export the module does
	// not have, or misses an operation.
	BadExport Reason = "export_invalid"
	// BadMapping: a sidecar operation's input or output mapping is not
	// one of the forms, or does not fit the service's schemas (a field the
	// schema lacks, that is not a string, or required fields the mapping
	// can never fill); the detail names the field.
	BadMapping Reason = "mapping_invalid"
	// BadExtism: a sidecar's extism block breaks a bound (config keys and
	// values, memory.max_pages over an operation's memory limit,
	// timeout_ms past an operation's hard deadline); the detail names
	// the field and the figures.
	BadExtism Reason = "extism_invalid"
	// ExtismUnsupported: a sidecar asks for what the host never gives a
	// plugin: allowed_hosts or allowed_paths (no HTTP or file-system
	// functions), or a platform block with egress or hosts.
	ExtismUnsupported Reason = "extism_unsupported"
)

// ErrRefused matches every *Refusal with errors.Is.
var ErrRefused = errors.New("declaration refused")

// Refusal is a refused declaration or service.
type Refusal struct {
	Reason Reason `json:"reason"`
	// Path locates the problem in the declaration as a JSON pointer, e.g.
	// "/services/0/documentation/path".
	Path string `json:"path"`
	// Detail is a short explanation: fixed text, figures, and at most the
	// names it refuses (an unknown member, a mapping's field, a config
	// key), quoted and cut to 64 bytes. It is for the operator's log:
	// diagnostics publish the reason alone.
	Detail string `json:"detail,omitempty"`
	// Cause is the underlying refusal (a *schema.ProfileError or a policy
	// error) when there is one.
	Cause error `json:"-"`
}

func (r *Refusal) Error() string {
	s := fmt.Sprintf("%s at %s", r.Reason, r.Path)
	if r.Detail != "" {
		s += ": " + r.Detail
	}
	if r.Cause != nil {
		s += ": " + r.Cause.Error()
	}
	return s
}

// Is matches ErrRefused.
func (r *Refusal) Is(target error) bool { return target == ErrRefused }

// Unwrap returns the cause.
func (r *Refusal) Unwrap() error { return r.Cause }

func refuse(reason Reason, path, detail string) *Refusal {
	return &Refusal{Reason: reason, Path: path, Detail: detail}
}
