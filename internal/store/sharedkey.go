package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
)

// SigningKeyName is the shared key of signed download URLs (jobs).
const SigningKeyName = "signing"

// MinSharedKeyBytes is the shortest key SharedKey keeps.
const MinSharedKeyBytes = 32

// SharedKey returns the key called name that every process using the
// store shares (table shared_keys), making it the first time it is asked
// for: seed's bytes when seed is not nil and returns some (a key kept
// elsewhere before, such as the data folder's signing.key), else
// MinSharedKeyBytes random ones. Replicas starting together agree: the
// first insert wins and every process reads the stored key back.
func (s *Store) SharedKey(ctx context.Context, name string, seed func() ([]byte, error)) ([]byte, error) {
	key, err := s.readSharedKey(ctx, name)
	if err != nil || key != nil {
		return key, err
	}
	var fresh []byte
	if seed != nil {
		if fresh, err = seed(); err != nil {
			return nil, fmt.Errorf("store: seeding the %s key: %w", name, err)
		}
	}
	if fresh == nil {
		fresh = make([]byte, MinSharedKeyBytes)
		rand.Read(fresh)
	}
	if len(fresh) < MinSharedKeyBytes {
		return nil, fmt.Errorf("store: the %s key is %d bytes, fewer than %d", name, len(fresh), MinSharedKeyBytes)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO shared_keys (name, key) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`,
		name, hex.EncodeToString(fresh)); err != nil {
		return nil, fmt.Errorf("store: storing the %s key: %w", name, err)
	}
	key, err = s.readSharedKey(ctx, name)
	if err == nil && key == nil {
		err = fmt.Errorf("store: the %s key vanished after it was stored", name)
	}
	return key, err
}

func (s *Store) readSharedKey(ctx context.Context, name string) ([]byte, error) {
	var text string
	err := s.db.QueryRowContext(ctx, `SELECT key FROM shared_keys WHERE name = ?`, name).Scan(&text)
	if errors.Is(err, errNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: reading the %s key: %w", name, err)
	}
	key, err := hex.DecodeString(text)
	if err != nil || len(key) < MinSharedKeyBytes {
		return nil, fmt.Errorf("store: the stored %s key is malformed", name)
	}
	return key, nil
}
