// Command toolhost is the Toolhost binary: the server and the commands
// around it.
//
//	toolhost serve [--addr :8080] [--tools-dir wasm] [--data-dir data]  serve the API
//	toolhost run TOOL_CODE [--input FILE|-] [--tools-dir DIR]   run one item, print its result
//	toolhost list [--tools-dir DIR]                            every tool serve would serve, with its availability
//	toolhost check MODULE.wasm [--cache-dir DIR]               a module's services, or why it was refused
//	toolhost check INPUT OUTPUT OPERATION…                     profile-check a schema pair, print its fingerprint
//	toolhost policy [-operation FILE]                          the platform policy, or an operation's effective policy
//	toolhost token create --user NAME [--data-dir DIR]         a new API token for NAME (the account is made if missing)
//	toolhost token create --app NAME [--sandbox]               a new app token (tier app; the app is made if missing)
//	      [--capability CAP]...                                 (either kind) grant CAP, e.g. tools.net.probe, to the token
//	toolhost user create|token NAME [--capability CAP]...      a new account and its token, or another token (printed once)
//	toolhost user list | tokens NAME [--data-dir DIR]          the accounts, or an account's tokens by id (no secrets)
//	toolhost user revoke NAME TOKEN_ID                         revoke a token and the browser sessions signed in with it
//	toolhost user disable|enable NAME [--data-dir DIR]         disable or enable an account and all its tokens
//	toolhost app disable|enable NAME [--data-dir DIR]          disable or enable an app and all its tokens
//	toolhost abuse list [--since DURATION|RFC3339] [--data-dir DIR]  the abuse log, one JSON row a line
//	toolhost guard inspect|reset CALLER --redis URL [--json]   a caller's buckets and slots in the shared guard; free them
//	toolhost jobs list [--owner O] [--state S] [--limit N] [--json]  every owner's jobs, newest first, on any --store
//	toolhost jobs show|cancel ID [--json]                      a job with its files and error; cancel it
//	toolhost export [--out DIR]                                 the tools manifest and the OpenAPI document, as files
//	toolhost new NAME [--dir DIR] [--guest-replace PATH]       a new tool package that builds as it is
//	toolhost version                                           the build's version
//	toolhost COMMAND --help, toolhost help COMMAND             the command's flags, with their environment variables, config keys and defaults (exit 0)
//	toolhost help                                              the usage and every setting
//
// A setting (settings.go: --cache-dir, --addr, …) comes from its flag, else
// its environment variable (TOOLHOST_…), else the TOML file --config
// names, else its default (docs/configuration.md).
//
// Every command writes canonical JSON to stdout, except serve, which logs to
// stderr, token create, user create and user token, which print the bare
// token (shown once), user list and user tokens, one JSON row a line,
// jobs, text unless --json, and the other user and app commands, which
// print nothing. Every
// command exits 1 on a refusal or a failed item (the platform error is
// printed), 2 on a usage error.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/toolhost/toolhost/internal/engines"
	"github.com/toolhost/toolhost/internal/supervisor"
)

// errUsage is returned when the command line is malformed.
var errUsage = errors.New("usage")

// helpRequest is returned by a command given -h, -help or --help: run
// prints the command's usage lines and every flag of fs — a setting with
// its environment variable, config key and default, an argument with its
// default — to stdout and exits 0.
type helpRequest struct{ fs *flag.FlagSet }

func (h *helpRequest) Error() string { return "help requested" }

// text is the help: the usage lines of command and the flags.
func (h *helpRequest) text(command string) string {
	var b strings.Builder
	b.WriteString("usage:\n")
	inCommand := false
	for _, line := range strings.Split(usage, "\n") {
		switch {
		case strings.HasPrefix(line, "  toolhost "+command+" ") || line == "  toolhost "+command:
			b.WriteString(line + "\n")
			inCommand = true
		case inCommand && strings.HasPrefix(line, "        "): // a continued line
			b.WriteString(line + "\n")
		default:
			inCommand = false
		}
	}
	n := 0
	h.fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return b.String()
	}
	b.WriteString("\nflags (a setting's value comes from its flag, else its environment variable, else the --config file, else its default):\n")
	printFlags(&b, h.fs)
	return b.String()
}

// printed writes text to stdout and returns the exit code: 0, or 1 when
// stdout refuses it (a closed pipe, a full disk), said on stderr.
func printed(stdout, stderr io.Writer, text string) int {
	if _, err := io.WriteString(stdout, text); err != nil {
		complain(stderr, "toolhost: %v\n", err)
		return 1
	}
	return 0
}

// helpArgs is the command line that asks command for its help, with the
// subcommand whose flags the help lists.
func helpArgs(command string) []string {
	switch command {
	case "token":
		return []string{"token", "create", "--help"}
	case "user", "app":
		return []string{command, "disable", "--help"}
	case "abuse":
		return []string{"abuse", "list", "--help"}
	case "guard":
		return []string{"guard", "inspect", "--help"}
	case "jobs":
		return []string{"jobs", "list", "--help"}
	}
	return []string{command, "--help"}
}

// isHelpFlag reports whether arg asks for help.
func isHelpFlag(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// parseFlags is fs.Parse with -h, -help and --help answered by a
// *helpRequest for fs.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return &helpRequest{fs: fs}
	}
	return err
}

// usageOr returns err when it is a help request or a usage error, a
// usage error naming err when it is another (a flag that does not parse),
// else refusal: a command's own usage error.
func usageOr(err, refusal error) error {
	var help *helpRequest
	switch {
	case errors.As(err, &help), errors.Is(err, errUsage):
		return err
	case err != nil:
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return refusal
}

const usage = `usage:
  toolhost serve [--addr :8080] [--tools-dir wasm] [--data-dir data] [--cache-dir DIR] [--cache-max-bytes 1GiB]
        [--log-format text|json] [--log-level info] [--guard report|enforce] [--trusted-proxy CIDR]... [--quota-table FILE]
        [--probe-allow CIDRS] [--deprecation true|rfc9745] [--session-cookie NAME]
        [--spare-workers N] [--shutdown-timeout 1m] [--drain-delay 2s] [--interpreter-memory 128MiB]
  toolhost run TOOL_CODE [--input FILE|-] [--tools-dir DIR] [--cache-dir DIR] [--cache-max-bytes SIZE] [--probe-allow CIDRS]
  toolhost list [--tools-dir DIR] [--cache-dir DIR] [--cache-max-bytes SIZE] [--probe-allow CIDRS]
  toolhost check MODULE.wasm [--cache-dir DIR] [--cache-max-bytes SIZE]
  toolhost check INPUT_SCHEMA OUTPUT_SCHEMA OPERATION...
  toolhost policy [-operation FILE]
  toolhost export [--out DIR] [--tools-dir DIR] [--cache-dir DIR] [--cache-max-bytes SIZE] [--probe-allow CIDRS]
  toolhost token create --user NAME | --app NAME [--sandbox] [--capability CAP]... [--data-dir DIR]
  toolhost user create|token NAME [--capability CAP]... [--data-dir DIR]
  toolhost user list [--data-dir DIR]
  toolhost user tokens NAME [--data-dir DIR]
  toolhost user revoke NAME TOKEN_ID [--data-dir DIR]
  toolhost user disable|enable NAME [--data-dir DIR]
  toolhost app disable|enable NAME [--data-dir DIR]
  toolhost abuse list [--since DURATION|RFC3339] [--data-dir DIR]
  toolhost guard inspect|reset CALLER --redis URL [--quota-table FILE] [--json]
  toolhost jobs list [--owner O] [--state S] [--limit N] [--json] [--data-dir DIR] [--store URL] [--files-dir DIR]
  toolhost jobs show|cancel ID [--json] [--data-dir DIR] [--store URL] [--files-dir DIR]
  toolhost version
  toolhost new NAME [--dir DIR] [--guest-replace PATH]
  toolhost help [COMMAND]
Every command that takes a setting also takes --config FILE (TOML).
toolhost COMMAND --help (or toolhost help COMMAND) prints the command's flags with their
environment variables, config keys and defaults; toolhost help lists every setting.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command line and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		complain(stderr, "%s", usage)
		return 2
	}
	if args[0] == "worker" {
		// The hidden child entry point of a native job: it refuses to run
		// unless a supervisor started it.
		return supervisor.WorkerMain(engines.Packages())
	}
	if args[0] == "help" && len(args) > 1 {
		// toolhost help COMMAND is toolhost COMMAND --help.
		args = helpArgs(args[1])
	}
	if len(args) == 2 && isHelpFlag(args[1]) {
		switch args[0] {
		case "check":
			// The module check's settings; the schema check has none.
			var tf toolFlags
			return printed(stdout, stderr, (&helpRequest{fs: checkFlags(&tf).fs}).text(args[0]))
		case "version":
			// No flags: the usage lines are the help.
			return printed(stdout, stderr, (&helpRequest{fs: flag.NewFlagSet(args[0], flag.ContinueOnError)}).text(args[0]))
		case "token", "user", "app", "abuse", "jobs":
			args = helpArgs(args[0])
		case "guard":
			args = helpArgs(args[0])
		}
	}
	var err error
	switch args[0] {
	case "policy":
		err = runPolicy(args[1:], stdout)
	case "check":
		if len(args) >= 2 && isModulePath(args[1]) {
			err = runCheckModule(args[1], args[2:], stdout)
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
		err = runUser(args[1:], stdout)
	case "app":
		err = runApp(args[1:])
	case "abuse":
		err = runAbuse(args[1:], stdout)
	case "guard":
		err = runGuard(args[1:], stdout)
	case "jobs":
		err = runJobs(args[1:], stdout)
	case "new":
		err = runNew(args[1:], stdout)
	case "version":
		_, err = fmt.Fprintln(stdout, versionLine())
	case "help", "-h", "--help":
		var b strings.Builder
		b.WriteString(usage)
		printSettings(&b)
		return printed(stdout, stderr, b.String())
	default:
		err = fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	var help *helpRequest
	switch {
	case err == nil:
		return 0
	case errors.As(err, &help):
		return printed(stdout, stderr, help.text(args[0]))
	case errors.Is(err, errUsage):
		complain(stderr, "toolhost: %v\n%s", err, usage)
		return 2
	default:
		complain(stderr, "toolhost: %v\n", err)
		return 1
	}
}
