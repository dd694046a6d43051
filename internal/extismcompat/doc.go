// Package extismcompat holds the differential test of Toolhost's Extism
// kernel against the Extism go-sdk: every plugin of the corpus that `make
// extism` builds from testdata/extism (Go with go-pdk as a reactor and as
// a command module, WAT, C, AssemblyScript) runs, over a table of inputs,
// through go-sdk — the oracle — and through Toolhost's four surfaces: the
// loader (internal/wasmtool), `toolhost run`, the compute route and the
// run route over HTTP on loopback. Each must end as go-sdk ends, give the
// bytes go-sdk's output maps to through the sidecar's output mapping, and
// carry the plugin's own error text where its surface carries one
// (docs/extism-compat.md).
//
// The package has no code of its own: only this comment and the tests.
// go-sdk is a test dependency of the root module; nothing else imports it.
package extismcompat
