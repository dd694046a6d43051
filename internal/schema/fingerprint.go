package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/toolhost/toolhost/internal/wire"
)

// Fingerprint returns the schema fingerprint of a service: the lower-case
// hex SHA-256 of the canonical JSON (package wire) of
//
//	{"input_schema": input, "operations": [names sorted by code point], "output_schema": output}
//
// Duplicate names are kept (a definition with duplicates fails [Check]).
// Effective policy limits are not part of it. The schemas are decoded JSON
// values; an error means one of them has no canonical JSON form or nests
// deeper than [MaxDepth].
func Fingerprint(input, output any, operations []string) (string, error) {
	ops := slices.Sorted(slices.Values(operations))
	if ops == nil {
		ops = []string{}
	}
	doc := map[string]any{
		"input_schema":  input,
		"operations":    ops,
		"output_schema": output,
	}
	// +1 for the wrapping object: a schema within MaxDepth always encodes.
	b, err := wire.Encode(doc, wire.Limits{MaxDepth: MaxDepth + 1})
	if err != nil {
		return "", fmt.Errorf("encoding the fingerprint document: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
