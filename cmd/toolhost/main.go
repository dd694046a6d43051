// Command toolhost is the Toolhost binary: the server and the commands
// around it.
//
//	toolhost serve [--addr :8080] [--tools-dir wasm] [--data-dir data]  serve the API (flags also from $TOOLHOST_*)
//	toolhost run TOOL_CODE [--input FILE|-] [--tools-dir DIR]   run one item, print its result
//	toolhost list [--tools-dir DIR]                            every tool serve would serve, with its availability
//	toolhost check MODULE.wasm                                 a module's services, or why it was refused
//	toolhost check INPUT OUTPUT OPERATION…                     profile-check a schema pair, print its fingerprint
//	toolhost policy [-operation FILE]                          the platform policy, or an operation's effective policy
//	toolhost token create --user NAME [--data-dir DIR]         a new API token for NAME (the account is made if missing)
//	toolhost token create --app NAME [--sandbox]               a new app token (tier app; the app is made if missing)
//	      [--capability CAP]...                                 (either kind) grant CAP, e.g. tools.net.probe, to the token
//	toolhost user disable|enable NAME [--data-dir DIR]         disable or enable an account and all its tokens
//	toolhost app disable|enable NAME [--data-dir DIR]          disable or enable an app and all its tokens
//	toolhost abuse list [--since DURATION|RFC3339] [--data-dir DIR]  the abuse log, one JSON row a line
//	toolhost export [--out DIR]                                 the tools manifest and the OpenAPI document, as files
//	toolhost version                                           the build's version
//
// Every command writes canonical JSON to stdout, except serve, which logs to
// stderr, token create, which prints the bare token (shown once), and user
// and app, which print nothing. Every
// command exits 1 on a refusal or a failed item (the platform error is
// printed), 2 on a usage error.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"toolhost/internal/engines"
	"toolhost/internal/supervisor"
)

// errUsage is returned when the command line is malformed.
var errUsage = errors.New("usage")

const usage = `usage:
  toolhost serve [--addr :8080] [--tools-dir wasm] [--data-dir data] [--cache-dir DIR] [--log-format text|json]
  toolhost run TOOL_CODE [--input FILE|-] [--tools-dir DIR] [--cache-dir DIR]
  toolhost list [--tools-dir DIR] [--cache-dir DIR]
  toolhost check MODULE.wasm
  toolhost check INPUT_SCHEMA OUTPUT_SCHEMA OPERATION...
  toolhost policy [-operation FILE]
  toolhost export [--out DIR] [--tools-dir DIR]
  toolhost token create --user NAME | --app NAME [--sandbox] [--capability CAP]... [--data-dir DIR]
  toolhost user disable|enable NAME [--data-dir DIR]
  toolhost app disable|enable NAME [--data-dir DIR]
  toolhost abuse list [--since DURATION|RFC3339] [--data-dir DIR]
  toolhost version
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command line and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	if args[0] == "worker" {
		// The hidden child entry point of a native job: it refuses to run
		// unless a supervisor started it.
		return supervisor.WorkerMain(engines.Packages())
	}
	var err error
	switch args[0] {
	case "policy":
		err = runPolicy(args[1:], stdout)
	case "check":
		if len(args) == 2 && isModulePath(args[1]) {
			err = checkModule(args[1], stdout)
		} else {
			err = runCheck(args[1:], stdout)
		}
	case "run":
		err = runRun(args[1:], stdin, stdout)
	case "list":
		err = runList(args[1:], stdout)
	case "serve":
		err = runServe(args[1:], stderr)
	case "export":
		err = runExport(args[1:], stdout)
	case "token":
		err = runToken(args[1:], stdout)
	case "user":
		err = runUser(args[1:])
	case "app":
		err = runApp(args[1:])
	case "abuse":
		err = runAbuse(args[1:], stdout)
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
