// Package wasmtool turns tool modules into runnable services: it loads a
// module with package host, reads its package declaration (the describe
// export, or a sidecar manifest for an existing Extism plugin), checks it
// with package tooldef, clamps every operation to the platform policy, and
// runs items.
//
// Running an item is: strict decoding of the parameters, validation against
// the input schema, a fresh capped instance for the compute call (package
// host), strict decoding of the result, validation against the output
// schema, canonical encoding. Every failure is a *toolerr.Error with the
// platform's code; a tool's own error keeps its code, flag and message.
package wasmtool
