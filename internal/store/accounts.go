package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// The accounts' rows (package auth, docs/accounts.md): users, apps, their
// tokens and capabilities, and browser sessions — the statements of one
// concern, for both dialects. Package auth holds them as its auth.Rows
// interface; *Store implements it. Errors are the driver's, unwrapped, so
// that the caller can tell sql.ErrNoRows and Busy from the rest.

// OwnerTable is a table of token owners: "users" or "apps".
type OwnerTable string

const (
	Users OwnerTable = "users"
	Apps  OwnerTable = "apps"
)

// column is the tokens column naming an owner of t.
func (t OwnerTable) column() string {
	if t == Apps {
		return "app_id"
	}
	return "user_id"
}

// ErrOwnerDisabled is InsertToken's refusal of a disabled user or app.
var ErrOwnerDisabled = errors.New("store: the token's owner is disabled")

// TokenRecord is a token with its owner, as LookupToken reads it.
type TokenRecord struct {
	ID                int64
	LastUsed          sql.NullString
	Sandbox           bool
	UserID, AppID     sql.NullInt64
	UserName, AppName sql.NullString
	Disabled          bool           // the owner's flag
	Capabilities      sql.NullString // space-separated, NULL for none
}

// SessionRecord is an unexpired session, as LookupSession reads it.
type SessionRecord struct {
	ID       int64
	Expires  string
	UserID   sql.NullInt64
	UserName sql.NullString
	Disabled sql.NullBool // the signed-in user's flag; NULL for an anonymous session
}

// UserRecord is an account as ListUsers reads it.
type UserRecord struct {
	ID               int64
	Name             string
	Disabled         bool
	Created          string
	Tokens, Sessions int
	LastUsed         sql.NullString
}

// TokenInfoRecord is a token of an account as ListUserTokens reads it.
type TokenInfoRecord struct {
	ID                     int64
	Created                string
	LastUsed, Capabilities sql.NullString
}

// InsertUser makes an enabled account named name; inserted is false when
// one of that name (case ignored) exists.
func (s *Store) InsertUser(ctx context.Context, name string) (id int64, inserted bool, err error) {
	return insertedID(s.db.ExecContext(ctx, `INSERT INTO users (name) VALUES (?) ON CONFLICT (name) DO NOTHING`, name))
}

// insertedID is the id of the row an INSERT that may insert nothing made:
// inserted is false when it made none.
func insertedID(res sql.Result, err error) (id int64, inserted bool, _ error) {
	if err != nil {
		return 0, false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return 0, false, err
	}
	id, err = res.LastInsertId()
	return id, err == nil, err
}

// SetDisabled sets the disabled flag of the row of t named name and
// returns how many rows it matched (0: no such row).
func (s *Store) SetDisabled(ctx context.Context, t OwnerTable, name string, disabled bool) (int64, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE `+string(t)+` SET disabled = ? WHERE name = ?`, disabled, name)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// InsertToken stores the token of hash for the row of t named name, made
// when missing, with capabilities, in one transaction; ErrOwnerDisabled,
// and nothing stored, when the row is disabled.
func (s *Store) InsertToken(ctx context.Context, t OwnerTable, name string, sandbox bool, hash string, capabilities []string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit; before it, the failure is the one returned
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+string(t)+` (name) VALUES (?) ON CONFLICT (name) DO NOTHING`, name); err != nil {
		return err
	}
	var ownerID int64
	var disabled bool
	if err := tx.QueryRowContext(ctx, `SELECT id, disabled FROM `+string(t)+` WHERE name = ?`, name).Scan(&ownerID, &disabled); err != nil {
		return err
	}
	if disabled {
		return ErrOwnerDisabled
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO tokens (`+t.column()+`, sandbox, hash) VALUES (?, ?, ?)`, ownerID, sandbox, hash)
	if err != nil {
		return err
	}
	tokenID, err := res.LastInsertId()
	if err != nil {
		return err
	}
	for _, c := range capabilities {
		if _, err := tx.ExecContext(ctx, `INSERT INTO token_capabilities (token_id, capability) VALUES (?, ?)`, tokenID, c); err != nil {
			return fmt.Errorf("granting %s: %w", c, err)
		}
	}
	return tx.Commit()
}

// LookupToken reads the token of hash with its owner and capabilities in
// one query, on a reader; sql.ErrNoRows when there is none.
func (s *Store) LookupToken(ctx context.Context, hash string) (TokenRecord, error) {
	var r TokenRecord
	err := s.read.QueryRowContext(ctx, `
		SELECT t.id, t.last_used_at, t.sandbox, u.id, u.name, a.id, a.name,
		       coalesce(u.disabled, a.disabled),
		       (SELECT group_concat(c.capability, ' ') FROM token_capabilities c WHERE c.token_id = t.id)
		FROM tokens t
		LEFT JOIN users u ON u.id = t.user_id
		LEFT JOIN apps a ON a.id = t.app_id
		WHERE t.hash = ?`, hash).Scan(
		&r.ID, &r.LastUsed, &r.Sandbox, &r.UserID, &r.UserName, &r.AppID, &r.AppName, &r.Disabled, &r.Capabilities)
	return r, err
}

// DeleteToken deletes the token of hash (its capabilities and signed-in
// sessions go with it) and returns how many rows it deleted.
func (s *Store) DeleteToken(ctx context.Context, hash string) (int64, error) {
	return s.affected(ctx, `DELETE FROM tokens WHERE hash = ?`, hash)
}

// DeleteUserToken deletes token id of user userID, as DeleteToken does.
func (s *Store) DeleteUserToken(ctx context.Context, id, userID int64) (int64, error) {
	return s.affected(ctx, `DELETE FROM tokens WHERE id = ? AND user_id = ?`, id, userID)
}

// TouchToken sets token id's last use to stamp unless it is already at or
// after it, so that racing requests never move it back.
func (s *Store) TouchToken(ctx context.Context, id int64, stamp string) error {
	_, err := s.db.ExecContext(ctx,
		`UPDATE tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`, stamp, id, stamp)
	return err
}

// InsertSession stores an anonymous session of hash.
func (s *Store) InsertSession(ctx context.Context, hash, created, expires string) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO sessions (hash, created_at, expires_at) VALUES (?, ?, ?)`, hash, created, expires)
	return err
}

// InsertUserSession stores a session of hash signed in with token tokenID
// and owned by its user, reading the token again: a token revoked since,
// or a disabled account's, inserts nothing (inserted false).
func (s *Store) InsertUserSession(ctx context.Context, hash, created, expires string, tokenID int64) (id int64, inserted bool, err error) {
	return insertedID(s.db.ExecContext(ctx, `
		INSERT INTO sessions (hash, created_at, expires_at, user_id, token_id)
		SELECT ?, ?, ?, t.user_id, t.id FROM tokens t JOIN users u ON u.id = t.user_id
		WHERE t.id = ? AND u.disabled = 0`, hash, created, expires, tokenID))
}

// DeleteSession deletes the session of hash and returns how many rows it
// deleted.
func (s *Store) DeleteSession(ctx context.Context, hash string) (int64, error) {
	return s.affected(ctx, `DELETE FROM sessions WHERE hash = ?`, hash)
}

// LookupSession reads the session of hash that expires after now, with its
// signed-in user, on a reader; sql.ErrNoRows when there is none.
func (s *Store) LookupSession(ctx context.Context, hash, now string) (SessionRecord, error) {
	var r SessionRecord
	err := s.read.QueryRowContext(ctx,
		`SELECT s.id, s.expires_at, u.id, u.name, u.disabled
		 FROM sessions s LEFT JOIN users u ON u.id = s.user_id
		 WHERE s.hash = ? AND s.expires_at > ?`,
		hash, now).Scan(&r.ID, &r.Expires, &r.UserID, &r.UserName, &r.Disabled)
	return r, err
}

// PurgeSessions deletes the sessions expired at now.
func (s *Store) PurgeSessions(ctx context.Context, now string) (int64, error) {
	return s.affected(ctx, `DELETE FROM sessions WHERE expires_at <= ?`, now)
}

// UserID is the id of the account named name (case ignored);
// sql.ErrNoRows when there is none.
func (s *Store) UserID(ctx context.Context, name string) (int64, error) {
	var id int64
	err := s.read.QueryRowContext(ctx, `SELECT id FROM users WHERE name = ?`, name).Scan(&id)
	return id, err
}

// ListUsers reads every account by name (case ignored), with its token
// count, its signed-in sessions unexpired at now and its tokens' last use.
func (s *Store) ListUsers(ctx context.Context, now string) ([]UserRecord, error) {
	rows, err := s.read.QueryContext(ctx, `
		SELECT u.id, u.name, u.disabled, u.created_at,
		       (SELECT count(*) FROM tokens t WHERE t.user_id = u.id),
		       (SELECT count(*) FROM sessions s WHERE s.user_id = u.id AND s.expires_at > ?),
		       (SELECT max(t.last_used_at) FROM tokens t WHERE t.user_id = u.id)
		FROM users u ORDER BY u.name COLLATE NOCASE, u.id`, now)
	if err != nil {
		return nil, err
	}
	defer rows.Close() //nolint:errcheck // rows.Err, returned below, has the iteration's failure
	var out []UserRecord
	for rows.Next() {
		var u UserRecord
		if err := rows.Scan(&u.ID, &u.Name, &u.Disabled, &u.Created, &u.Tokens, &u.Sessions, &u.LastUsed); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// ListUserTokens reads the tokens of user userID, oldest first.
func (s *Store) ListUserTokens(ctx context.Context, userID int64) ([]TokenInfoRecord, error) {
	rows, err := s.read.QueryContext(ctx, `
		SELECT t.id, t.created_at, t.last_used_at,
		       (SELECT group_concat(c.capability, ' ') FROM token_capabilities c WHERE c.token_id = t.id)
		FROM tokens t WHERE t.user_id = ? ORDER BY t.id`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close() //nolint:errcheck // rows.Err, returned below, has the iteration's failure
	var out []TokenInfoRecord
	for rows.Next() {
		var ti TokenInfoRecord
		if err := rows.Scan(&ti.ID, &ti.Created, &ti.LastUsed, &ti.Capabilities); err != nil {
			return nil, err
		}
		out = append(out, ti)
	}
	return out, rows.Err()
}

// affected runs an UPDATE or DELETE on the writer and returns the rows it
// changed.
func (s *Store) affected(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
