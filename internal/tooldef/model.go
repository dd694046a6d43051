package tooldef

import "github.com/toolhost/toolhost/internal/policy"

// Package is a decoded package declaration: the versions every service
// shares and the services, each either usable or refused on its own, so
// that one bad service does not hide a healthy sibling.
type Package struct {
	ContractVersion       string
	ImplementationVersion string
	Services              []Declared
}

// Declared is one declared service: a definition when Refusal is nil.
// ToolCode is set whenever the declaration had a readable tool_code, even
// when refused, so that duplicate codes can be found across claims.
type Declared struct {
	ToolCode   string
	Definition *Definition
	Refusal    *Refusal
}

// Text is a service's name and description in one language.
type Text struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// UI is the service's UI descriptor.
type UI struct {
	Kind         string `json:"kind"`
	ComponentKey string `json:"component_key"`
	Version      string `json:"version"`
}

// Documentation points at the service's documentation page.
type Documentation struct {
	Path    string `json:"path"`
	Version string `json:"version"`
}

// Languages are the languages every service has texts in.
var Languages = []string{"en", "it", "fr", "es"}

// Definition is a checked service: its metadata, operation policies as
// declared (defaults applied), schemas that passed the profile, and the
// fingerprint the host computed. It is immutable once built.
type Definition struct {
	ToolCode           string
	Name               string
	Description        string
	NameI18nKey        *string
	DescriptionI18nKey *string
	I18n               map[string]Text
	Category           string
	IconKey            string
	UI                 UI
	Documentation      Documentation
	Operations         []Operation
	// InputSchema and OutputSchema are decoded JSON values (package wire).
	InputSchema  any
	OutputSchema any
	// Platform holds the tools.tool@1 fields the service declared, its
	// defaults filled. It is not part of the fingerprint.
	Platform Platform
	// Extism holds a sidecar plugin's manifest settings; zero for tools
	// that export compute. It is not part of the fingerprint.
	Extism Extism

	ContractVersion       string
	ImplementationVersion string
	// Fingerprint is schema.Fingerprint of the schemas and operations.
	Fingerprint string
}

// Operation is one declared operation: its policy, defaults applied, and,
// for a module loaded through a sidecar manifest, the export that runs it.
type Operation struct {
	Policy policy.Operation
	// Export is the module function that computes this operation when the
	// module is an existing Extism plugin described by a sidecar; empty
	// for tools that export compute.
	Export string
	// Input and Output say how a sidecar plugin's bytes are made from
	// the parameters and made into the result (docs/tool-authors.md,
	// "Existing Extism plugins"); both are MapJSON for a sidecar when not
	// declared, and zero for tools that export compute.
	Input, Output Mapping
}

// MappingKind is the form of a sidecar operation's input or output.
type MappingKind string

// The mapping kinds.
const (
	// MapJSON: the input is the parameters object without "operation",
	// canonical JSON; the output is parsed strictly as the result object.
	MapJSON MappingKind = "json"
	// MapText: the input is one string parameter's UTF-8 bytes; the
	// output, valid UTF-8, is one string field of the result.
	MapText MappingKind = "text"
	// MapBase64: the input is one base64 (standard, padded) string
	// parameter decoded; the output is one string field of the result,
	// the bytes in base64.
	MapBase64 MappingKind = "base64"
	// MapNone: the input is empty (inputs only).
	MapNone MappingKind = "none"
)

// Mapping is an operation's input or output mapping: its kind and, for
// MapText and MapBase64, the field it reads or fills.
type Mapping struct {
	Kind  MappingKind
	Field string
}

// Extism is a sidecar plugin's Extism manifest settings for one service:
// the package's extism block with the service's over it.
type Extism struct {
	// Config is what config_get reads: the package's keys, the service's
	// over them key by key; nil when neither declares any.
	Config map[string]string
	// MaxPages caps the item's linear memory and host blocks at
	// MaxPages × 64 KiB; 0 leaves the operation's memory limit alone.
	MaxPages int64
	// TimeoutMS shortens the item's hard deadline to this many
	// milliseconds from its start; 0 leaves it alone.
	TimeoutMS int64
}

// OperationNames returns the operation names in declaration order.
func (d *Definition) OperationNames() []string {
	names := make([]string, len(d.Operations))
	for i, op := range d.Operations {
		names[i] = op.Policy.Name
	}
	return names
}
