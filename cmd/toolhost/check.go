package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/wire"
)

// schemaFileLimits bounds a schema file read from disk.
var schemaFileLimits = wire.Limits{MaxBytes: 4 << 20, MaxDepth: schema.MaxDepth}

// runCheck profile-checks an input/output schema pair against the declared
// operation names and prints the schema fingerprint, or every violation.
func runCheck(args []string, stdout io.Writer) error {
	if len(args) < 3 {
		return fmt.Errorf("%w: check needs an input schema, an output schema and at least one operation", errUsage)
	}
	input, err := readSchema(args[0])
	if err != nil {
		return err
	}
	output, err := readSchema(args[1])
	if err != nil {
		return err
	}
	operations := args[2:]
	if err := schema.Check(input, output, operations); err != nil {
		var pe *schema.ProfileError
		if errors.As(err, &pe) {
			if perr := printCanonical(stdout, pe); perr != nil {
				return perr
			}
		}
		return err
	}
	fingerprint, err := schema.Fingerprint(input, output, operations)
	if err != nil {
		return err
	}
	return printCanonical(stdout, map[string]any{
		"operations":         operations,
		"schema_fingerprint": fingerprint,
	})
}

// readSchema reads and strictly decodes one schema file.
func readSchema(path string) (any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v, err := wire.Decode(data, schemaFileLimits)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return v, nil
}
