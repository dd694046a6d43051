// Package wire is Toolhost's strict, canonical JSON: the one way bytes from a
// caller or a tool become values, and values become bytes.
//
// # Decoding
//
// [Decode] accepts exactly one JSON value (RFC 8259) and refuses, each with
// its own sentinel error, input over the byte limit ([ErrTooLarge], checked
// before any parsing), a byte-order mark ([ErrByteOrderMark]), invalid UTF-8
// ([ErrInvalidUTF8]), lone surrogates whether raw or escaped as "\ud800"
// ([ErrLoneSurrogate]), duplicate object names compared after unescaping, so
// {"a":1,"\u0061":2} is a duplicate ([ErrDuplicateName]), numbers that are
// not finite as float64 such as 1e400 ([ErrNonFinite]), nesting deeper than
// the depth limit ([ErrTooDeep], raised at the opening bracket, before the
// nested value is read), data after the value ([ErrTrailingData]) and any
// other syntax error ([ErrSyntax]). Every refusal is an [*Error] carrying the
// byte offset, so errors.Is and errors.As both work.
//
// A decoded value is made of map[string]any, []any, string, json.Number
// (the number literal exactly as received), bool and nil: the same shapes
// encoding/json and github.com/santhosh-tekuri/jsonschema/v6 use.
//
// # Encoding
//
// [Encode] and [Append] write canonical JSON: object names sorted by Unicode
// code point, no insignificant whitespace, UTF-8 output without HTML escaping
// and without \u escapes of non-ASCII characters, json.Number written exactly
// as given. The byte limit is counted in encoded bytes while encoding: the
// encoder stops as soon as the output passes it. Encoding a decoded value
// therefore changes only whitespace, key order and string escapes, never a
// value. The rules other implementations must follow to reproduce a
// fingerprint are in docs/canonical-json.md.
//
// The tokenizer is github.com/go-json-experiment/json/jsontext; this package
// adds the limits, the classification of refusals and the canonical writer.
package wire
