package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
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
func runToken(args []string, stdout io.Writer) (err error) {
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
	defer closeReporting(&err, s.Close)
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

// runUser is what an operator needs to give people access (docs/hub-auth.md):
//
//	user create NAME [--capability CAP]...  a new account and its first token, printed alone on a line
//	user token NAME [--capability CAP]...   another token for an existing account, printed alone on a line
//	user list                               the accounts, one JSON row a line (no secret)
//	user tokens NAME                        the account's tokens by id, one JSON row a line (no secret)
//	user revoke NAME TOKEN_ID               revoke one token and the browser sessions signed in with it
//	user disable|enable NAME                every token and session of the account fails, or works again
//
// A token is printed this once; the database keeps only its hash. A token
// is what a person pastes into the hub's sign-in page. Disabling and
// revoking take effect at once in the database; a running server's cache
// follows within its TTL (10 s).
func runUser(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: user takes the subcommand create, token, list, tokens, revoke, disable or enable", errUsage)
	}
	switch args[0] {
	case "create", "token":
		return runUserToken(args[0], args[1:], stdout)
	case "list":
		return runUserList(args[1:], stdout)
	case "tokens":
		return runUserTokens(args[1:], stdout)
	case "revoke":
		return runUserRevoke(args[1:])
	}
	return runDisable("user", args, (*auth.Accounts).DisableUser, (*auth.Accounts).EnableUser, auth.ErrNoSuchUser)
}

// userFlags parses the flags of `user VERB` (--data-dir, and
// --capability when caps is not nil) and returns its positional
// arguments, exactly want of them.
func userFlags(verb string, args []string, want int, caps *capabilityFlags, usage string) (*dataFlags, []string, error) {
	fs := flag.NewFlagSet("user "+verb, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := newOptions(fs)
	var df dataFlags
	df.register(o)
	if caps != nil {
		fs.Var(caps, "capability", "grant a `capability` to this token (repeatable): "+strings.Join(auth.Capabilities(), ", "))
	}
	positional, err := o.parse(args, true)
	if err != nil || len(positional) != want {
		return nil, nil, usageOr(err, fmt.Errorf("%w: user %s takes %s", errUsage, verb, usage))
	}
	return &df, positional, nil
}

// runUserToken is `user create NAME` (the account must not exist) and
// `user token NAME` (it must): a new token, printed alone on one line.
func runUserToken(verb string, args []string, stdout io.Writer) (err error) {
	var caps capabilityFlags
	df, pos, err := userFlags(verb, args, 1, &caps, "one NAME")
	if err != nil {
		return err
	}
	name := pos[0]
	for _, c := range caps {
		if err := auth.CheckCapability(c); err != nil {
			return fmt.Errorf("cannot grant capability %q: it is not one Toolhost knows (known: %s)", c, strings.Join(auth.Capabilities(), ", "))
		}
	}
	ctx := context.Background()
	s, a, err := df.accounts(ctx, verb == "create")
	if errors.Is(err, errNoDatabase) {
		return fmt.Errorf("no such user %q: %w", name, err)
	}
	if err != nil {
		return err
	}
	defer closeReporting(&err, s.Close)
	if verb == "create" {
		_, err = a.CreateUser(ctx, name)
		switch {
		case errors.Is(err, auth.ErrUserExists):
			return fmt.Errorf("user %q exists; give it another token with `toolhost user token %s`", name, name)
		case errors.Is(err, auth.ErrInvalidName):
			return fmt.Errorf("%q is not a valid user name: 1 to 64 letters, digits and . _ @ + -, starting with a letter or a digit", name)
		case err != nil:
			return fmt.Errorf("creating user %q: %w", name, err)
		}
	} else if _, err := a.UserTokens(ctx, name); errors.Is(err, auth.ErrNoSuchUser) {
		return fmt.Errorf("no such user %q; make it with `toolhost user create %s`", name, name)
	} else if err != nil {
		return err
	}
	token, err := a.CreateUserToken(ctx, name, caps)
	switch {
	case errors.Is(err, auth.ErrDisabled):
		return fmt.Errorf("user %q is disabled; enable it with `toolhost user enable %s` first", name, name)
	case err != nil:
		return fmt.Errorf("creating a token for user %q: %w", name, err)
	}
	_, err = fmt.Fprintln(stdout, token)
	return err
}

// userRow is one line of `user list`.
type userRow struct {
	Name     string `json:"name"`
	Disabled bool   `json:"disabled"`
	Created  string `json:"created_at"`
	Tokens   int    `json:"tokens"`
	Sessions int    `json:"sessions"`
	LastUsed string `json:"last_used_at,omitempty"`
}

// tokenRow is one line of `user tokens`.
type tokenRow struct {
	ID           int64    `json:"id"`
	Created      string   `json:"created_at"`
	LastUsed     string   `json:"last_used_at,omitempty"`
	Capabilities []string `json:"capabilities"`
}

// runUserList is `user list`. A missing database lists nothing.
func runUserList(args []string, stdout io.Writer) (err error) {
	df, _, err := userFlags("list", args, 0, nil, "no argument")
	if err != nil {
		return err
	}
	ctx := context.Background()
	s, a, err := df.accounts(ctx, false)
	if errors.Is(err, errNoDatabase) {
		return nil
	}
	if err != nil {
		return err
	}
	defer closeReporting(&err, s.Close)
	users, err := a.Users(ctx)
	if err != nil {
		return err
	}
	for _, u := range users {
		if err := printCanonical(stdout, userRow{Name: u.Name, Disabled: u.Disabled, Created: u.Created,
			Tokens: u.Tokens, Sessions: u.Sessions, LastUsed: u.LastUsed}); err != nil {
			return err
		}
	}
	return nil
}

// runUserTokens is `user tokens NAME`.
func runUserTokens(args []string, stdout io.Writer) (err error) {
	df, pos, err := userFlags("tokens", args, 1, nil, "one NAME")
	if err != nil {
		return err
	}
	ctx := context.Background()
	s, a, err := df.accounts(ctx, false)
	if errors.Is(err, errNoDatabase) {
		return fmt.Errorf("no such user %q: %w", pos[0], err)
	}
	if err != nil {
		return err
	}
	defer closeReporting(&err, s.Close)
	toks, err := a.UserTokens(ctx, pos[0])
	if errors.Is(err, auth.ErrNoSuchUser) {
		return fmt.Errorf("no such user %q", pos[0])
	}
	if err != nil {
		return err
	}
	for _, t := range toks {
		caps := t.Capabilities
		if caps == nil {
			caps = []string{}
		}
		if err := printCanonical(stdout, tokenRow{ID: t.ID, Created: t.Created, LastUsed: t.LastUsed, Capabilities: caps}); err != nil {
			return err
		}
	}
	return nil
}

// runUserRevoke is `user revoke NAME TOKEN_ID`.
func runUserRevoke(args []string) (err error) {
	df, pos, err := userFlags("revoke", args, 2, nil, "NAME TOKEN_ID (an id of `toolhost user tokens NAME`)")
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(pos[1], 10, 64)
	if err != nil || id <= 0 {
		return fmt.Errorf("%w: %q is not a token id (an id of `toolhost user tokens %s`)", errUsage, pos[1], pos[0])
	}
	ctx := context.Background()
	s, a, err := df.accounts(ctx, false)
	if errors.Is(err, errNoDatabase) {
		return fmt.Errorf("no such user %q: %w", pos[0], err)
	}
	if err != nil {
		return err
	}
	defer closeReporting(&err, s.Close)
	switch err := a.RevokeUserToken(ctx, pos[0], id); {
	case errors.Is(err, auth.ErrNoSuchUser):
		return fmt.Errorf("no such user %q", pos[0])
	case errors.Is(err, auth.ErrNoSuchToken):
		return fmt.Errorf("user %q has no token %d", pos[0], id)
	default:
		return err
	}
}

// runApp is `app disable NAME` and `app enable NAME`, as runUser for apps.
func runApp(args []string) error {
	return runDisable("app", args, (*auth.Accounts).DisableApp, (*auth.Accounts).EnableApp, auth.ErrNoSuchApp)
}

// runDisable is `KIND disable NAME` and `KIND enable NAME`. It never creates
// a database.
func runDisable(kind string, args []string, disable, enable func(*auth.Accounts, context.Context, string) error, missing error) (err error) {
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
	defer closeReporting(&err, s.Close)
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
