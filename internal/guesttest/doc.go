// Package guesttest holds the guest SDK's tests that need the host side of
// this repository: the schema profile (internal/schema), the wire decoder,
// tooldef's reading of a declaration, the real host running modules built
// with the SDK (inside and outside the repository). The SDK itself is its
// own module (github.com/toolhost/toolhost/guest, standard library only),
// so these live in the root module; the SDK's own tests stay in guest/.
package guesttest
