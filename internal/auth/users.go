package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// ErrNoSuchToken is returned by RevokeUserToken when the account has no
// token of that id.
var ErrNoSuchToken = errors.New("auth: no such token")

// User is an account as an operator lists it (`toolhost user list`).
type User struct {
	ID       int64
	Name     string // as spelt when the account was made
	Disabled bool
	Created  string // UTC RFC 3339 with milliseconds, as stored
	// Tokens counts the account's tokens; Sessions its unexpired signed-in
	// browser sessions.
	Tokens, Sessions int
	// LastUsed is the latest last_used_at of its tokens; "" when none was
	// used. It is written at most once a minute per token.
	LastUsed string
}

// TokenInfo describes one token without its secret, which is not kept:
// its id (what `toolhost user revoke` names), when it was made and last
// used, and its capabilities, sorted.
type TokenInfo struct {
	ID           int64
	Created      string
	LastUsed     string // "" when never used
	Capabilities []string
}

// Users returns every account, by name (ASCII case ignored). It only
// reads.
func (a *Accounts) Users(ctx context.Context) ([]User, error) {
	stored, err := a.db.ListUsers(ctx, a.now().UTC().Format(timeLayout))
	if err != nil {
		return nil, fmt.Errorf("listing users: %w", err)
	}
	var out []User
	for _, r := range stored {
		out = append(out, User{ID: r.ID, Name: r.Name, Disabled: r.Disabled, Created: r.Created,
			Tokens: r.Tokens, Sessions: r.Sessions, LastUsed: r.LastUsed.String})
	}
	return out, nil
}

// UserTokens returns the tokens of the named account, oldest first;
// ErrNoSuchUser when there is no such account. It only reads.
func (a *Accounts) UserTokens(ctx context.Context, name string) ([]TokenInfo, error) {
	id, err := a.userID(ctx, name)
	if err != nil {
		return nil, err
	}
	stored, err := a.db.ListUserTokens(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("listing tokens: %w", err)
	}
	var out []TokenInfo
	for _, r := range stored {
		ti := TokenInfo{ID: r.ID, Created: r.Created, LastUsed: r.LastUsed.String}
		if r.Capabilities.Valid {
			ti.Capabilities = strings.Fields(r.Capabilities.String)
		}
		out = append(out, ti)
	}
	return out, nil
}

// RevokeUserToken deletes the token of id that belongs to the named
// account, as RevokeToken does (its capabilities and its signed-in sessions
// go with it), for an operator who holds the token's id but not its text.
// It fails with ErrNoSuchUser or ErrNoSuchToken; the account's other
// tokens are unchanged.
func (a *Accounts) RevokeUserToken(ctx context.Context, name string, id int64) error {
	uid, err := a.userID(ctx, name)
	if err != nil {
		return err
	}
	defer a.cache.clear()
	if n, err := a.db.DeleteUserToken(ctx, id, uid); err != nil {
		return fmt.Errorf("revoking a token: %w", err)
	} else if n == 0 {
		return ErrNoSuchToken
	}
	return nil
}

// userID is the id of the named account, or ErrNoSuchUser.
func (a *Accounts) userID(ctx context.Context, name string) (int64, error) {
	if !validName.MatchString(name) {
		return 0, ErrNoSuchUser
	}
	id, err := a.db.UserID(ctx, name)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, ErrNoSuchUser
	case err != nil:
		return 0, fmt.Errorf("reading user %s: %w", name, err)
	}
	return id, nil
}
