package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/toolhost/toolhost/internal/policy"
)

// runPolicy prints the platform policy after checking its coherence, or,
// with -operation, the effective policy of an operation declaration clamped
// to the platform.
func runPolicy(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("policy", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	opFile := fs.String("operation", "", "a JSON operation declaration (`file`) to clamp to the platform")
	if err := parseFlags(fs, args); err != nil || fs.NArg() != 0 {
		return usageOr(err, fmt.Errorf("%w: policy takes only -operation FILE", errUsage))
	}
	platform := policy.DefaultPlatform()
	if err := platform.Validate(); err != nil {
		return err
	}
	var out any = platform
	if *opFile != "" {
		data, err := os.ReadFile(*opFile)
		if err != nil {
			return err
		}
		op, err := policy.DecodeOperation(data)
		if err != nil {
			return fmt.Errorf("reading %s: %w", *opFile, err)
		}
		if out, err = policy.Clamp(platform, op); err != nil {
			return err
		}
	}
	return printCanonical(stdout, out)
}
