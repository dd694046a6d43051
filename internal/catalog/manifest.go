package catalog

import (
	"strings"

	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/schema"
)

// The build-time schema manifest: seed 000's schema export ("roots the
// real registry adapters in a build-only OpenAPI 3.1 document with paths:
// {}", one manifest entry per (tool_code, contract_version)). It is what
// `toolhost export` writes to tool-schema-manifest.json for the codec and
// contract-map generators; it is not served at run time, and it is not the
// runtime OpenAPI document (GET /openapi.json, openapi.json).

// ManifestVersion is the version of the manifest's layout.
const ManifestVersion = "1"

// ManifestFile is the name `toolhost export` gives the manifest.
const ManifestFile = "tool-schema-manifest.json"

// SchemaManifest is the build-time schema manifest: an OpenAPI 3.1
// document without paths, whose components hold every service's
// validation (input) and serialization (output) schema roots, their
// $defs lifted beside them so that each reference resolves in the
// document, and whose x-tool-manifest lists the service identities.
type SchemaManifest struct {
	OpenAPI           string          `json:"openapi"`
	Info              ManifestInfo    `json:"info"`
	JSONSchemaDialect string          `json:"jsonSchemaDialect"`
	Paths             map[string]any  `json:"paths"`
	Components        ManifestSchemas `json:"components"`
	Manifest          ManifestBody    `json:"x-tool-manifest"`
}

// ManifestInfo is the document's info object.
type ManifestInfo struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Description string `json:"description"`
}

// ManifestSchemas is the document's components object.
type ManifestSchemas struct {
	Schemas map[string]any `json:"schemas"`
}

// ManifestBody is the manifest proper: its layout version and one entry
// per service identity, sorted by tool code then contract version.
type ManifestBody struct {
	Version  string          `json:"version"`
	Services []ManifestEntry `json:"services"`
}

// ManifestEntry is one (tool_code, contract_version) service identity:
// what a generated contract map keys and compares. implementation_version
// is deliberately absent: it is pinned per request from the live
// descriptor, never a codec or renderer key.
type ManifestEntry struct {
	ToolCode          string   `json:"tool_code"`
	ContractVersion   string   `json:"contract_version"`
	SchemaFingerprint string   `json:"schema_fingerprint"`
	Operations        []string `json:"operations"`
	UI                UIEntry  `json:"ui"`
	// ValidationSchema and SerializationSchema point at the input
	// (validation) and output (serialization) schema roots in components.
	// A root's $defs are the components named "<root>.<def>": putting
	// them back under $defs (and the references back to "#/$defs/…")
	// gives the registry's schema, the fingerprint's input, exactly.
	ValidationSchema    ManifestRef `json:"validation_schema"`
	SerializationSchema ManifestRef `json:"serialization_schema"`
}

// UIEntry is a service's UI descriptor as the contract map compares it.
type UIEntry struct {
	Kind         string `json:"kind"`
	ComponentKey string `json:"component_key"`
	Version      string `json:"version"`
}

// ManifestRef is a JSON reference.
type ManifestRef struct {
	Ref string `json:"$ref"`
}

// Manifest returns the build-time schema manifest of every service of
// snapshot s (available or not: a contract is a contract even where its
// engine is missing on the build host). version is the toolhost version
// that made it.
func Manifest(s *registry.Snapshot, version string) SchemaManifest {
	m := SchemaManifest{
		OpenAPI: "3.1.0",
		Info: ManifestInfo{
			Title:   "Toolhost tool schema manifest",
			Version: version,
			Description: "Build-time schema manifest, one entry per (tool_code, contract_version) under x-tool-manifest; " +
				"not a runtime API (paths is empty; the runtime API is /openapi.json).",
		},
		JSONSchemaDialect: schema.Dialect,
		Paths:             map[string]any{},
		Components:        ManifestSchemas{Schemas: map[string]any{}},
		Manifest:          ManifestBody{Version: ManifestVersion, Services: []ManifestEntry{}},
	}
	for _, svc := range s.Services() { // code-sorted; one contract version per code
		d := svc.Definition
		base := manifestName(d.ToolCode, d.ContractVersion)
		in, out := base+".input", base+".output"
		for name, sch := range map[string]any{in: d.InputSchema, out: d.OutputSchema} {
			if doc, ok := sch.(map[string]any); ok {
				liftSchema(m.Components.Schemas, name, name, doc)
			} else {
				m.Components.Schemas[name] = sch // a boolean schema has no references
			}
		}
		m.Manifest.Services = append(m.Manifest.Services, ManifestEntry{
			ToolCode:            d.ToolCode,
			ContractVersion:     d.ContractVersion,
			SchemaFingerprint:   d.Fingerprint,
			Operations:          d.OperationNames(),
			UI:                  UIEntry{Kind: d.UI.Kind, ComponentKey: d.UI.ComponentKey, Version: d.UI.Version},
			ValidationSchema:    ManifestRef{Ref: manifestRef(in)},
			SerializationSchema: ManifestRef{Ref: manifestRef(out)},
		})
	}
	return m
}

// manifestName is the component name prefix of a service identity:
// "<tool_code>.v<contract_version>", in the characters OpenAPI allows in
// component names (a SemVer's "+" becomes "_").
func manifestName(code, contractVersion string) string {
	v := strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, contractVersion)
	return code + ".v" + v
}

func manifestRef(name string) string { return "#/components/schemas/" + name }
