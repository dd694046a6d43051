package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"toolhost/internal/auth"
	"toolhost/internal/server"
	"toolhost/internal/store"
)

// dataDirEnv names the environment variable that sets the default data
// folder.
const dataDirEnv = "TOOLHOST_DATA_DIR"

// databaseFile is the name of the database inside the data folder.
const databaseFile = server.DatabaseFile

// dataFlags are the flags of the commands that open the database.
type dataFlags struct {
	dataDir string
}

// register adds --data-dir, whose default is $TOOLHOST_DATA_DIR or ./data.
func (f *dataFlags) register(fs *flag.FlagSet) {
	def := os.Getenv(dataDirEnv)
	if def == "" {
		def = "data"
	}
	fs.StringVar(&f.dataDir, "data-dir", def, "the data folder, holding "+databaseFile+" (default $"+dataDirEnv+" or ./data)")
}

// errNoDatabase is returned when a command that only changes accounts finds
// no database to change.
var errNoDatabase = errors.New("no database")

// accounts opens the data folder's database. With create, the folder and the
// database are created when missing; without, a missing database is
// errNoDatabase, so that a mistyped --data-dir leaves no empty one behind.
func (f *dataFlags) accounts(ctx context.Context, create bool) (*store.Store, *auth.Accounts, error) {
	path := filepath.Join(f.dataDir, databaseFile)
	if !create {
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

// runToken is `token create --user NAME`: it makes a token, and the account
// when there is none, and prints the token alone on one line. The token is
// shown this once; the database keeps only its hash.
func runToken(args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return fmt.Errorf("%w: token takes the subcommand create", errUsage)
	}
	fs := flag.NewFlagSet("token create", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var df dataFlags
	df.register(fs)
	user := fs.String("user", "", "the account the token is for; it is created when missing")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 0 || *user == "" {
		return fmt.Errorf("%w: token create takes --user NAME", errUsage)
	}
	ctx := context.Background()
	s, a, err := df.accounts(ctx, true)
	if err != nil {
		return err
	}
	defer s.Close()
	token, err := a.CreateToken(ctx, *user)
	switch {
	case errors.Is(err, auth.ErrDisabled):
		return fmt.Errorf("user %q is disabled; enable it with `toolhost user enable %s` first", *user, *user)
	case errors.Is(err, auth.ErrInvalidName):
		return fmt.Errorf("%q is not a valid user name: 1 to 64 letters, digits and . _ @ + -, starting with a letter or a digit", *user)
	case err != nil:
		return fmt.Errorf("creating a token for %q: %w", *user, err)
	}
	_, err = fmt.Fprintln(stdout, token)
	return err
}

// runUser is `user disable NAME` and `user enable NAME`. Disabling takes
// effect at once: every token of the account then fails to authenticate.
func runUser(args []string) error {
	if len(args) == 0 || (args[0] != "disable" && args[0] != "enable") {
		return fmt.Errorf("%w: user takes the subcommand disable or enable", errUsage)
	}
	verb := args[0]
	fs := flag.NewFlagSet("user "+verb, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var df dataFlags
	df.register(fs)
	positional, err := parseWithPositional(fs, args[1:])
	if err != nil || len(positional) != 1 {
		return fmt.Errorf("%w: user %s takes one NAME", errUsage, verb)
	}
	name := positional[0]
	ctx := context.Background()
	s, a, err := df.accounts(ctx, false)
	if errors.Is(err, errNoDatabase) {
		return fmt.Errorf("no such user %q: %w", name, err)
	}
	if err != nil {
		return err
	}
	defer s.Close()
	if verb == "disable" {
		err = a.DisableUser(ctx, name)
	} else {
		err = a.EnableUser(ctx, name)
	}
	if errors.Is(err, auth.ErrNoSuchUser) {
		return fmt.Errorf("no such user %q", name)
	}
	return err
}
