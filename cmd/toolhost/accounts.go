package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolhost/toolhost/internal/auth"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/store"
)

// dataDirEnv names the environment variable that sets the default data
// folder.
const dataDirEnv = "TOOLHOST_DATA_DIR"

// databaseFile is the name of the database inside the data folder.
const databaseFile = server.DatabaseFile

// dataFlags are the flags of the commands that open the database.
type dataFlags struct {
	dataDir string
	store   string // --store: a PostgreSQL URL, or "" for the data folder's file
}

// register adds --data-dir and --store.
func (f *dataFlags) register(o *options) {
	o.register("data-dir", &stringValue{p: &f.dataDir})
	o.register("store", &stringValue{p: &f.store})
}

// database is what store.Open takes: --store, else the data folder's
// SQLite file; local reports the latter.
func (f *dataFlags) database() (target string, local bool) {
	if f.store != "" {
		return f.store, false
	}
	return filepath.Join(f.dataDir, databaseFile), true
}

// errNoDatabase is returned when a command that only changes accounts finds
// no database to change.
var errNoDatabase = errors.New("no database")

// accounts opens the data folder's database. With create, the folder and the
// database are created when missing; without, a missing database is
// errNoDatabase, so that a mistyped --data-dir leaves no empty one behind.
func (f *dataFlags) accounts(ctx context.Context, create bool) (*store.Store, *auth.Accounts, error) {
	path, local := f.database()
	if !create && local {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("%w at %s", errNoDatabase, path)
		}
	}
	s, err := store.Open(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	return s, auth.New(s), nil
}

// capabilityFlags collects the repeated --capability flag.
type capabilityFlags []string

func (c *capabilityFlags) String() string { return strings.Join(*c, ",") }

func (c *capabilityFlags) Set(v string) error {
	*c = append(*c, v)
	return nil
}

// runToken is `token create --user NAME | --app NAME [--capability CAP]...
// [--sandbox]`: it makes a token, and the account or app when there is none,
// and prints the token alone on one line. The token is shown this once; the
// database keeps only its hash. Capabilities are granted to this token
// alone, and only as named: none by default, none to a sandbox token.
func runToken(args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return fmt.Errorf("%w: token takes the subcommand create", errUsage)
	}
	fs := flag.NewFlagSet("token create", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := newOptions(fs)
	var df dataFlags
	df.register(o)
	user := fs.String("user", "", "the account (`name`) the token is for; it is created when missing")
	app := fs.String("app", "", "the app (`name`) the token is for (tier app); it is created when missing")
	sandbox := fs.Bool("sandbox", false, "make an app's sandbox token (small allowances)")
	var caps capabilityFlags
	fs.Var(&caps, "capability", "grant a `capability` to this token (repeatable): "+strings.Join(auth.Capabilities(), ", "))
	if rest, err := o.parse(args[1:], false); err != nil || len(rest) != 0 || (*user == "") == (*app == "") {
		return usageOr(err, fmt.Errorf("%w: token create takes --user NAME or --app NAME", errUsage))
	}
	if *sandbox && *app == "" {
		return fmt.Errorf("%w: --sandbox is for app tokens (--app NAME)", errUsage)
	}
	if *sandbox && len(caps) > 0 {
		return fmt.Errorf("%w: a sandbox token holds no capability; drop --sandbox or --capability", errUsage)
	}
	// Checked before the database is opened, so that a mistyped capability
	// leaves nothing behind.
	for _, c := range caps {
		if err := auth.CheckCapability(c); err != nil {
			return fmt.Errorf("cannot grant capability %q: it is not one Toolhost knows (known: %s)", c, strings.Join(auth.Capabilities(), ", "))
		}
	}
	ctx := context.Background()
	s, a, err := df.accounts(ctx, true)
	if err != nil {
		return err
	}
	defer s.Close()
	kind, name := "user", *user
	var token string
	if *app != "" {
		kind, name = "app", *app
		token, err = a.CreateAppToken(ctx, name, caps, *sandbox)
	} else {
		token, err = a.CreateUserToken(ctx, name, caps)
	}
	switch {
	case errors.Is(err, auth.ErrDisabled):
		return fmt.Errorf("%s %q is disabled; enable it with `toolhost %s enable %s` first", kind, name, kind, name)
	case errors.Is(err, auth.ErrInvalidName):
		return fmt.Errorf("%q is not a valid %s name: 1 to 64 letters, digits and . _ @ + -, starting with a letter or a digit", name, kind)
	case err != nil:
		return fmt.Errorf("creating a token for %s %q: %w", kind, name, err)
	}
	_, err = fmt.Fprintln(stdout, token)
	return err
}

// runUser is `user disable NAME` and `user enable NAME`. Disabling takes
// effect at once: every token of the account then fails to authenticate.
func runUser(args []string) error {
	return runDisable("user", args, (*auth.Accounts).DisableUser, (*auth.Accounts).EnableUser, auth.ErrNoSuchUser)
}

// runApp is `app disable NAME` and `app enable NAME`, as runUser for apps.
func runApp(args []string) error {
	return runDisable("app", args, (*auth.Accounts).DisableApp, (*auth.Accounts).EnableApp, auth.ErrNoSuchApp)
}

// runDisable is `KIND disable NAME` and `KIND enable NAME`. It never creates
// a database.
func runDisable(kind string, args []string, disable, enable func(*auth.Accounts, context.Context, string) error, missing error) error {
	if len(args) == 0 || (args[0] != "disable" && args[0] != "enable") {
		return fmt.Errorf("%w: %s takes the subcommand disable or enable", errUsage, kind)
	}
	verb := args[0]
	fs := flag.NewFlagSet(kind+" "+verb, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := newOptions(fs)
	var df dataFlags
	df.register(o)
	positional, err := o.parse(args[1:], true)
	if err != nil || len(positional) != 1 {
		return usageOr(err, fmt.Errorf("%w: %s %s takes one NAME", errUsage, kind, verb))
	}
	name := positional[0]
	ctx := context.Background()
	s, a, err := df.accounts(ctx, false)
	if errors.Is(err, errNoDatabase) {
		return fmt.Errorf("no such %s %q: %w", kind, name, err)
	}
	if err != nil {
		return err
	}
	defer s.Close()
	if verb == "disable" {
		err = disable(a, ctx, name)
	} else {
		err = enable(a, ctx, name)
	}
	if errors.Is(err, missing) {
		return fmt.Errorf("no such %s %q", kind, name)
	}
	return err
}
