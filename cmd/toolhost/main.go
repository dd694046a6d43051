// Command toolhost is the Toolhost binary. Until the server lands it offers
// the contract kernel's checks on the command line:
//
//	toolhost policy [-operation FILE]       the platform policy, or an operation's effective policy
//	toolhost check INPUT OUTPUT OPERATION…  profile-check a schema pair and print its fingerprint
//	toolhost version                        the build's version
//
// Every command writes canonical JSON to stdout and exits 1 on a refusal,
// 2 on a usage error.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// errUsage is returned when the command line is malformed.
var errUsage = errors.New("usage")

const usage = `usage:
  toolhost policy [-operation FILE]
  toolhost check INPUT_SCHEMA OUTPUT_SCHEMA OPERATION...
  toolhost version
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "policy":
		err = runPolicy(args[1:], stdout)
	case "check":
		err = runCheck(args[1:], stdout)
	case "version":
		_, err = fmt.Fprintln(stdout, version())
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		err = fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "toolhost: %v\n%s", err, usage)
		return 2
	default:
		fmt.Fprintf(stderr, "toolhost: %v\n", err)
		return 1
	}
}
