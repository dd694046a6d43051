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
//
// An existing Extism plugin declared by a sidecar runs its operation's own
// export instead of compute: its input is what the operation's input
// mapping makes of the parameters (the object without operation as
// canonical JSON, one text or base64 field, or nothing), its output
// becomes the result through the output mapping, and the service's extism
// block gives it its config (config_get) and caps its memory and hard
// deadline (docs/tool-authors.md, "Existing Extism plugins").
package wasmtool
