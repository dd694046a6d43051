// Package guest is the SDK tool authors write Toolhost tools with: Go code
// built with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared into a module that
// speaks the Extism guest ABI and exports describe and compute.
//
// It imports only the standard library so that it cross-builds for wasip1;
// `make check` keeps that true. The SDK itself arrives with the WASM tool
// path (see docs/ and the project's issues); this file fixes its place in
// the layout.
package guest
