// Package schema holds the three things the tool contract asks of a
// service's JSON Schemas: the profile check, the fingerprint and validation.
//
// All schemas and documents are decoded JSON values as package wire
// produces them (map[string]any, []any, string, json.Number, bool, nil).
// Nothing here modifies them, loads anything from the network or the file
// system, or keeps state between calls.
//
// # Profile
//
// [Check] accepts an input and output schema pair with the service's
// declared operation names only when:
//
//   - each root declares $schema [Dialect] (Draft 2020-12);
//   - each root, after following local $refs, is an object schema with
//     "type": "object", or a oneOf/anyOf union of such roots;
//   - every object schema at any schema position has
//     "additionalProperties": false (the walk follows keyword semantics:
//     const, enum, default and examples hold data, and a property named $id
//     is a name);
//   - every input root requires an "operation" property that is a string
//     const or a non-empty string-only enum without a default, and the
//     operations the input roots accept are exactly the declared ones, each
//     declared once;
//   - every $ref and discriminator mapping value is a local JSON pointer
//     ("#" or "#/...") that resolves in its own document;
//   - no schema uses $id, $dynamicRef or $recursiveRef;
//   - the validator compiles the schema;
//   - nothing nests deeper than [MaxDepth].
//
// A refusal is a [*ProfileError] listing every violation found, each with a
// stable [Reason], bounded to [MaxViolations]. Check terminates on any
// value, however deep, cyclic or malformed.
//
// # Fingerprint
//
// [Fingerprint] is the SHA-256 of the canonical JSON of the schemas and the
// sorted operation names; testdata/fingerprint holds vectors for other
// implementations.
//
// # Validation
//
// [Compile] compiles a schema once into a [Validator], safe for concurrent
// use. [Validator.Validate] returns a [toolerr.Error] whose issues carry a
// stable code per failure kind ([IssueCodes]) and the failing location —
// never a value from the document, a validator message or a schema URL —
// bounded to [toolerr.MaxIssues] issues of at most [toolerr.MaxPathSegments]
// segments, with the total in IssueCount. String lengths count Unicode code
// points.
package schema
