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
	rows, err := a.db.ReadDB().QueryContext(ctx, `
		SELECT u.id, u.name, u.disabled, u.created_at,
		       (SELECT count(*) FROM tokens t WHERE t.user_id = u.id),
		       (SELECT count(*) FROM sessions s WHERE s.user_id = u.id AND s.expires_at > ?),
		       (SELECT max(t.last_used_at) FROM tokens t WHERE t.user_id = u.id)
		FROM users u ORDER BY u.name COLLATE NOCASE, u.id`, a.now().UTC().Format(timeLayout))
	if err != nil {
		return nil, fmt.Errorf("listing users: %w", err)
	}
	defer rows.Close()
	var out []User
	for rows.Next() {
		var (
			u        User
			lastUsed sql.NullString
		)
		if err := rows.Scan(&u.ID, &u.Name, &u.Disabled, &u.Created, &u.Tokens, &u.Sessions, &lastUsed); err != nil {
			return nil, fmt.Errorf("listing users: %w", err)
		}
		u.LastUsed = lastUsed.String
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing users: %w", err)
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
	rows, err := a.db.ReadDB().QueryContext(ctx, `
		SELECT t.id, t.created_at, t.last_used_at,
		       (SELECT group_concat(c.capability, ' ') FROM token_capabilities c WHERE c.token_id = t.id)
		FROM tokens t WHERE t.user_id = ? ORDER BY t.id`, id)
	if err != nil {
		return nil, fmt.Errorf("listing tokens: %w", err)
	}
	defer rows.Close()
	var out []TokenInfo
	for rows.Next() {
		var (
			ti             TokenInfo
			lastUsed, caps sql.NullString
		)
		if err := rows.Scan(&ti.ID, &ti.Created, &lastUsed, &caps); err != nil {
			return nil, fmt.Errorf("listing tokens: %w", err)
		}
		ti.LastUsed = lastUsed.String
		if caps.Valid {
			ti.Capabilities = strings.Fields(caps.String)
		}
		out = append(out, ti)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing tokens: %w", err)
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
	res, err := a.db.DB().ExecContext(ctx, `DELETE FROM tokens WHERE id = ? AND user_id = ?`, id, uid)
	if err != nil {
		return fmt.Errorf("revoking a token: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
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
	var id int64
	err := a.db.ReadDB().QueryRowContext(ctx, `SELECT id FROM users WHERE name = ?`, name).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, ErrNoSuchUser
	case err != nil:
		return 0, fmt.Errorf("reading user %s: %w", name, err)
	}
	return id, nil
}
