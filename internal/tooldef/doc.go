// Package tooldef is the tool model: a package declaration (versions and
// 1–16 services) as a tool declares it, decoded strictly, and the checks
// that make a declared service a usable definition — metadata, operation
// policies, the schema profile — before the host computes its fingerprint.
//
// Both WASM modules (their describe export or a sidecar manifest) and
// native packages are declared in the same JSON shape, docs/guest-abi.md.
// Every refusal is a [*Refusal] with a stable [Reason] and a path into the
// declaration. Its detail carries no declaration text but the names it
// refuses — an unknown member, a mapping's field, a config key — quoted
// and bounded, for the operator's log; only the reason is published.
//
// With [Options.Sidecar] it also decodes the sidecar manifest of an
// existing Extism plugin: each operation's export and its input and output
// mappings, checked against the schemas, and the extism blocks of the
// package and its services (docs/tool-authors.md).
package tooldef
