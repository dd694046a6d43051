// Package tooldef is the tool model: a package declaration (versions and
// 1–16 services) as a tool declares it, decoded strictly, and the checks
// that make a declared service a usable definition — metadata, operation
// policies, the schema profile — before the host computes its fingerprint.
//
// Both WASM modules (their describe export or a sidecar manifest) and
// native packages are declared in the same JSON shape, docs/guest-abi.md.
// Every refusal is a [*Refusal] with a stable [Reason] and a path into the
// declaration; none carries declaration text beyond names the rules allow.
package tooldef
