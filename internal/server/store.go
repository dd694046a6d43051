package server

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/toolhost/toolhost/internal/api"
	"github.com/toolhost/toolhost/internal/store"
)

// openStore opens cfg.Store, or the data folder's SQLite file when it is
// empty. Anything else than a postgres:// URL in cfg.Store is refused, so
// that a mistyped URL is not taken for a file name.
func openStore(ctx context.Context, cfg Config) (*store.Store, error) {
	if cfg.Store == "" {
		return store.Open(ctx, filepath.Join(cfg.DataDir, DatabaseFile))
	}
	if !store.IsPostgres(cfg.Store) {
		return nil, errors.New("server: --store is a postgres:// or postgresql:// URL (empty: the data folder's SQLite file)")
	}
	return store.Open(ctx, cfg.Store)
}

// signingKey is the key of signed download URLs and, through ownerKey,
// of anonymous job owners: one key in the store (store.SharedKey), so
// that every replica of a PostgreSQL store signs and checks alike. On
// SQLite the store's key is made from the data folder's signing.key (made
// first when missing, as before), so that the URLs and owners of earlier
// versions stay valid.
func (s *Server) signingKey(ctx context.Context) ([]byte, error) {
	var seed func() ([]byte, error)
	if s.store.Dialect() == store.SQLite {
		seed = func() ([]byte, error) { return signingKey(filepath.Join(s.cfg.DataDir, SigningKeyFile)) }
	}
	return s.store.SharedKey(ctx, store.SigningKeyName, seed)
}

// storeChecks is /readyz's check of the store: a PostgreSQL server that
// does not answer makes the process unready.
func (s *Server) storeChecks() []api.ReadyCheck {
	return []api.ReadyCheck{{Name: "store", Check: s.store.Ping}}
}
