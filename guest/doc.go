// Package guest is the SDK tool authors write Toolhost tools with: a Go
// main package built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o wasm/x.wasm ./plugins-src/x
//
// into an Extism plugin that exports describe and compute
// (docs/guest-abi.md). It imports only the standard library.
//
// A tool declares its package once, from an init function, and leaves
// main empty:
//
//	func init() {
//		guest.Register(guest.Package{
//			ContractVersion: "1.0.0", ImplementationVersion: "1.0.0",
//			Services: []guest.Declaration{&guest.Service[Input, Output]{ /* … */ }},
//		})
//	}
//
//	func main() {}
//
// The describe export emits the declaration with input and output schemas
// derived from the Go types — at build time when the tool's main.go has
//
//	//go:generate go run github.com/toolhost/toolhost/guest/cmd/guestgen
//
// and the module is built with -tags guestgen after go generate: the
// module then links none of the derivation (see [UseDeclaration] and
// docs/tool-authors.md); the compute export decodes the parameters
// strictly into the service's input type, calls Compute and encodes its
// result. [Describe] and [Invoke] run the same code in a host test.
//
// Register builds each service's model of its types (what reflection
// tells, the field tables, the operations' field sets) once, so that a
// host that starts every instance from the initialised memory, as
// Toolhost does, pays nothing for it per item: compute reads the input and
// decodes the parameters in one pass each, straight into the input type,
// and falls back to a slower strict parse only to report a refusal.
//
// # Schemas from types
//
// The input and output types are structs. Each struct becomes an object
// schema with "additionalProperties": false, its properties named as
// encoding/json names them (json tags, embedded structs flattened) and
// "required" listing every field that is not a pointer and not tagged
// omitempty or omitzero. string is "string", bool "boolean", every integer
// type "integer" (sized ones with their range as minimum and maximum),
// float32 and float64 "number", []byte a base64 "string", a slice or array
// "array" with "items" (an array with its length as minItems and
// maxItems), a nested struct an inline object. Maps, interfaces, pointers
// other than a field's own type, recursive types and types with their own
// JSON or text methods are refused: the schema profile allows closed
// objects only. JSON null is never accepted nor produced: a nil pointer
// field is omitted, a nil slice is [].
//
// Field tags add constraints; on a slice or array field the scalar ones
// apply to its items:
//
//	doc:"…"            description
//	enum:"a,b,c"       enum (string and integer fields)
//	minimum:"0"        minimum, maximum (numbers)
//	maximum:"8"
//	minLength:"1"      minLength, maxLength (strings, in code points)
//	maxLength:"64"
//	pattern:"^[a-z]+$" pattern
//	minItems:"1"       minItems, maxItems (slices)
//	maxItems:"16"
//	default:"2"        default: documentation only, never injected
//	ops:"a,b"          the operations that have the field (root fields only)
//
// A default is the bare text for a string field and a JSON literal
// otherwise, and it is allowed on optional fields only: an omitted field
// stays absent (nil, or the zero value), and the tool applies its own
// default.
//
// # Operations
//
// The input type has a required string field tagged json:"operation"; its
// values are the names of Service.Operations. When every operation has the
// same fields the input schema is one object whose "operation" is an enum
// (a const for a single operation). When ops tags give operations
// different fields, it is a oneOf of one object per operation under
// $defs/<operation>, each with an "operation" const and only its fields,
// and an OpenAPI discriminator on "operation". Compute decodes only the
// fields the requested operation has; any other is refused.
//
// ops tags on output fields make the output schema an anyOf of one object
// per distinct field set (named after its first operation); a field the
// computed operation does not have must be left zero.
//
// # The tools platform
//
// Service.Platform declares how the tools platform (ADR-027) lists and runs
// the service: its status, execution (client, sync or job), whether the
// run API has it, the job a job tool's run submits, file inputs and file
// output, whether anonymous callers may run it, a capability, its quota
// class and cost, egress and hosts. nil declares the defaults of a pure
// transform the page runs in the browser and the server runs for API
// callers; docs/contracts.md has every field and rule.
//
// # Errors
//
// Compute returns an [*Error] to choose the code ([InvalidInput],
// [Failed]); any other error is execution_failed with its text, and a
// panic is recovered as execution_failed. Messages are shown to callers:
// give positions and short reasons, never submitted values.
// [Context.Checkpoint] and [Context.ClaimEngineWindow] return an
// execution_limit error (retryable) when the item must stop.
package guest
