// Package host is the host side of the Extism guest ABI on wazero: it loads
// and compiles a tool module, calls its describe export, and runs each item in
// a fresh, capped instance. It is public so that tool authors can test their
// modules with it, and it imports nothing from internal/.
//
// The implementation arrives with the WASM tool path; this file fixes its
// place in the layout.
package host
