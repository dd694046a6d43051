// Package auth holds Toolhost's accounts and their API tokens, kept in the
// embedded database of package store (tables users and tokens, migration
// 0001_accounts.sql).
//
// # Tokens
//
// A token is [TokenPrefix] followed by 43 characters of unpadded base64url:
// 32 bytes from crypto/rand. The prefix lets people and secret scanners
// recognise a leaked token. [Accounts.CreateToken] returns the plaintext
// once; the database keeps only its SHA-256 in hex, so neither a copy of the
// database nor anything read from it gives a working token back. Nothing in
// this package logs a token or puts one in an error.
//
// [Accounts.Authenticate] hashes what a caller presents and looks the hash
// up. It answers [ErrInvalidToken] for a malformed or unknown token and
// [ErrDisabled] when the token's account is disabled: a disabled account
// keeps its tokens, and every one of them fails until the account is
// enabled again. The API answers both with 401.
//
// # What comes next
//
// App tokens and capabilities extend this package rather than change it: a
// migration adds the token's kind and app name as columns of tokens and a
// token_capabilities table keyed by token id; [Principal] gains the fields;
// Authenticate reads them in its one lookup; CreateToken's callers pass them
// in an options value. Callers that only need Authenticate (the API's guard)
// declare a one-method interface where they use it, so that another store can
// stand behind it.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"toolhost/internal/store"
)

var (
	// ErrInvalidToken is returned by Authenticate when the token is
	// malformed or is not one this database issued.
	ErrInvalidToken = errors.New("auth: invalid token")

	// ErrDisabled is returned by Authenticate when the token's account is
	// disabled, and by CreateToken when asked for a token for a disabled
	// account.
	ErrDisabled = errors.New("auth: account is disabled")

	// ErrNoSuchUser is returned when no account has the given name.
	ErrNoSuchUser = errors.New("auth: no such user")

	// ErrUserExists is returned by CreateUser when an account has the name
	// already, in any ASCII case.
	ErrUserExists = errors.New("auth: user already exists")

	// ErrInvalidName is returned when a user name is not 1 to 64
	// characters of ASCII letters, digits and . _ @ + -, starting with a
	// letter or a digit.
	ErrInvalidName = errors.New("auth: invalid user name")
)

// TokenPrefix starts every token.
const TokenPrefix = "th_"

const (
	tokenBytes = 32
	// tokenLen is the length of a token's text: the prefix and 32 bytes in
	// unpadded base64.
	tokenLen = len(TokenPrefix) + (tokenBytes*8+5)/6

	// lastUsedResolution is how stale a token's last_used_at may grow
	// before Authenticate writes it again, so that authentication stays a
	// read on the hot path.
	lastUsedResolution = time.Minute

	// timeLayout is how timestamps are stored: the format the schema's
	// strftime('%Y-%m-%dT%H:%M:%fZ', 'now') defaults write.
	timeLayout = "2006-01-02T15:04:05.000Z"
)

var (
	tokenEncoding = base64.RawURLEncoding.Strict()
	validName     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+\-]{0,63}$`)
)

// Principal is the account a token authenticates.
type Principal struct {
	UserID   int64
	UserName string // as spelt when the account was made
	TokenID  int64
}

// Accounts is the account and token store. It is safe for concurrent use.
type Accounts struct {
	db  *store.Store
	now func() time.Time
}

// New returns the accounts kept in s. s must stay open while they are used.
func New(s *store.Store) *Accounts {
	return &Accounts{db: s, now: time.Now}
}

// CreateUser makes an enabled account and returns its id.
func (a *Accounts) CreateUser(ctx context.Context, name string) (int64, error) {
	if !validName.MatchString(name) {
		return 0, ErrInvalidName
	}
	res, err := a.db.DB().ExecContext(ctx, `INSERT INTO users (name) VALUES (?) ON CONFLICT (name) DO NOTHING`, name)
	if err != nil {
		return 0, fmt.Errorf("creating user: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return 0, fmt.Errorf("creating user: %w", err)
	} else if n == 0 {
		return 0, ErrUserExists
	}
	return res.LastInsertId()
}

// DisableUser disables the named account: from the moment it returns, every
// token of the account fails with ErrDisabled. Disabling a disabled account
// succeeds and changes nothing.
func (a *Accounts) DisableUser(ctx context.Context, name string) error {
	return a.setDisabled(ctx, name, true)
}

// EnableUser enables the named account again; its tokens work again.
// Enabling an enabled account succeeds and changes nothing.
func (a *Accounts) EnableUser(ctx context.Context, name string) error {
	return a.setDisabled(ctx, name, false)
}

func (a *Accounts) setDisabled(ctx context.Context, name string, disabled bool) error {
	if !validName.MatchString(name) {
		return ErrNoSuchUser
	}
	// SQLite counts a row the UPDATE matched as changed even when the value
	// stays the same, so zero rows means no such account.
	res, err := a.db.DB().ExecContext(ctx, `UPDATE users SET disabled = ? WHERE name = ?`, disabled, name)
	if err != nil {
		return fmt.Errorf("updating user: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("updating user: %w", err)
	}
	if n == 0 {
		return ErrNoSuchUser
	}
	return nil
}

// CreateToken makes a new token for the named account and returns its
// plaintext, the only copy there will be. The account is created first when
// there is none by that name: issuing the first token is how an operator
// makes an account, in one command. A disabled account gets no new token
// (ErrDisabled); enable it first. The account's other tokens are unchanged.
func (a *Accounts) CreateToken(ctx context.Context, userName string) (string, error) {
	if !validName.MatchString(userName) {
		return "", ErrInvalidName
	}
	raw := make([]byte, tokenBytes)
	rand.Read(raw) // never fails: crypto/rand crashes the program instead
	token := TokenPrefix + tokenEncoding.EncodeToString(raw)

	tx, err := a.db.DB().BeginTx(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("creating token: %w", err)
	}
	defer tx.Rollback() // a no-op after Commit
	if _, err := tx.ExecContext(ctx, `INSERT INTO users (name) VALUES (?) ON CONFLICT (name) DO NOTHING`, userName); err != nil {
		return "", fmt.Errorf("creating token: %w", err)
	}
	var userID int64
	var disabled bool
	if err := tx.QueryRowContext(ctx, `SELECT id, disabled FROM users WHERE name = ?`, userName).Scan(&userID, &disabled); err != nil {
		return "", fmt.Errorf("creating token: %w", err)
	}
	if disabled {
		return "", ErrDisabled
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO tokens (user_id, hash) VALUES (?, ?)`, userID, hashToken(token)); err != nil {
		return "", fmt.Errorf("creating token: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return "", fmt.Errorf("creating token: %w", err)
	}
	return token, nil
}

// Authenticate returns the account token authenticates. It fails with
// ErrInvalidToken when token is malformed or unknown and with ErrDisabled
// when its account is disabled; any other error is the database's.
//
// It records the time of use in the token's last_used_at, at most once a
// minute per token. That write is bookkeeping: when it fails, the token
// still authenticates.
func (a *Accounts) Authenticate(ctx context.Context, token string) (*Principal, error) {
	if !wellFormed(token) {
		return nil, ErrInvalidToken
	}
	// The lookup compares hashes in an index, in time that depends on the
	// bytes compared, and that is safe: the caller chooses the token, not
	// its SHA-256, and cannot steer the hash towards a stored one byte by
	// byte, so timing tells nothing about any stored token. A constant-time
	// compare would protect a plaintext secret; none is stored.
	var (
		p        Principal
		disabled bool
		lastUsed sql.NullString
	)
	err := a.db.ReadDB().QueryRowContext(ctx, `
		SELECT t.id, t.last_used_at, u.id, u.name, u.disabled
		FROM tokens t JOIN users u ON u.id = t.user_id
		WHERE t.hash = ?`, hashToken(token)).Scan(&p.TokenID, &lastUsed, &p.UserID, &p.UserName, &disabled)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, ErrInvalidToken
	case err != nil:
		return nil, fmt.Errorf("authenticating: %w", err)
	case disabled:
		return nil, ErrDisabled
	}
	a.touch(ctx, p.TokenID, lastUsed)
	return &p, nil
}

// touch sets a token's last_used_at to now when it is missing or older than
// lastUsedResolution. The condition in the UPDATE keeps the time from going
// back when two requests race.
func (a *Accounts) touch(ctx context.Context, tokenID int64, lastUsed sql.NullString) {
	now := a.now().UTC()
	if lastUsed.Valid {
		if t, err := time.Parse(timeLayout, lastUsed.String); err == nil && now.Sub(t) < lastUsedResolution {
			return
		}
	}
	stamp := now.Format(timeLayout)
	_, _ = a.db.DB().ExecContext(ctx,
		`UPDATE tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`,
		stamp, tokenID, stamp)
}

// wellFormed reports whether token has the shape CreateToken makes. A
// token of another shape cannot be stored, so it is refused without a
// lookup.
func wellFormed(token string) bool {
	if len(token) != tokenLen || !strings.HasPrefix(token, TokenPrefix) {
		return false
	}
	_, err := tokenEncoding.DecodeString(token[len(TokenPrefix):])
	return err == nil
}

// hashToken is the stored form of a token: the lower-case hex SHA-256 of
// its whole text, prefix included.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
