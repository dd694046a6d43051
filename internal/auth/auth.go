// Package auth holds Toolhost's callers: accounts and apps with their API
// tokens, the capabilities granted to single tokens, and browser sessions,
// kept in the embedded database of package store (migrations
// 0001_accounts.sql and 0004_callers.sql).
//
// # Callers and tiers
//
// A caller is resolved to a [Principal] of one [Tier], lowest first:
// anonymous (no credentials; the guard keys it by address), session (a
// browser session cookie from [Accounts.CreateSession]), user (an account's
// token) and app (an application's client-credentials token). Its Key names
// it across the platform: "session:ID", "user:ID" or "app:ID".
//
// # Tokens
//
// A token is [TokenPrefix] followed by 43 characters of unpadded base64url:
// 32 bytes from crypto/rand. The prefix lets people and secret scanners
// recognise a leaked token. [Accounts.CreateToken], [Accounts.CreateUserToken]
// and [Accounts.CreateAppToken] return the plaintext once; the database keeps
// only its SHA-256 in hex, so neither a copy of the database nor anything
// read from it gives a working token back. Nothing in this package logs a
// token or a session value or puts one in an error.
//
// [Accounts.Authenticate] hashes what a caller presents and looks the hash
// up, with the token's account or app and its capabilities, in one query. It
// answers [ErrInvalidToken] for a malformed or unknown token and
// [ErrDisabled] when the token's account or app is disabled: a disabled
// account or app keeps its tokens, and every one of them fails until it is
// enabled again. The API answers both with 401.
//
// # Capabilities
//
// A capability, such as [CapabilityNetProbe], is granted to one token when
// the token is made, and only then: no token holds one by default, and a
// sandbox token holds none at all. Names must be known to [CheckCapability].
//
// Callers that only need Authenticate (the API's guard) declare a one-method
// interface where they use it, so that another store can stand behind it.
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
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolhost/toolhost/internal/store"
)

var (
	// ErrInvalidToken is returned by Authenticate and RevokeToken when the
	// token is malformed or is not one this database issued (or it was
	// revoked).
	ErrInvalidToken = errors.New("auth: invalid token")

	// ErrDisabled is returned by Authenticate when the token's account or
	// app is disabled, and by the token makers when asked for a token for a
	// disabled account or app.
	ErrDisabled = errors.New("auth: account is disabled")

	// ErrNoSuchUser is returned when no account has the given name.
	ErrNoSuchUser = errors.New("auth: no such user")

	// ErrNoSuchApp is returned when no app has the given name.
	ErrNoSuchApp = errors.New("auth: no such app")

	// ErrInvalidCapability is returned when a capability name is not a
	// lower-case letter followed by lower-case letters, digits, _ and ., or
	// is longer than 64 characters.
	ErrInvalidCapability = errors.New("auth: invalid capability name")

	// ErrUnknownCapability is returned when a well-formed capability name
	// is not one this package knows (see Capabilities).
	ErrUnknownCapability = errors.New("auth: unknown capability")

	// ErrSandboxCapability is returned by CreateAppToken when asked for a
	// sandbox token with a capability: a sandbox token holds none.
	ErrSandboxCapability = errors.New("auth: a sandbox token holds no capability")

	// ErrInvalidSession is returned by Session when the value is malformed,
	// unknown or expired (or purged).
	ErrInvalidSession = errors.New("auth: invalid session")

	// ErrUserExists is returned by CreateUser when an account has the name
	// already, in any ASCII case.
	ErrUserExists = errors.New("auth: user already exists")

	// ErrInvalidName is returned when a user or app name is not 1 to 64
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

// Principal is the caller a token or a session authenticates. Exactly one
// of UserID, AppID and SessionID is set, as Tier says. A Principal is a
// value read once; nothing updates it.
type Principal struct {
	// Tier is TierUser, TierApp or TierSession.
	Tier Tier
	// Key names the caller across the platform, for ownership and quotas:
	// "user:ID", "app:ID" or "session:ID".
	Key string

	UserID   int64
	UserName string // as spelt when the account was made
	AppID    int64
	AppName  string // as spelt when the app was made
	// TokenID is the token's id; 0 for a session.
	TokenID   int64
	SessionID int64

	// Capabilities are those granted to this token, sorted, never
	// duplicated; nil when none. Sessions hold none.
	Capabilities []string
	// Sandbox is set for an app's sandbox token.
	Sandbox bool
}

// Has reports whether the principal holds capability. A nil principal
// holds none.
func (p *Principal) Has(capability string) bool {
	if p == nil {
		return false
	}
	_, found := slices.BinarySearch(p.Capabilities, capability)
	return found
}

// Accounts is the account and token store. It is safe for concurrent use.
type Accounts struct {
	db    Rows
	now   func() time.Time
	cache *cache // nil without WithCache
}

// Rows is where the accounts' rows are kept: users, apps, tokens and
// their capabilities, sessions. Their statements, for SQLite and
// PostgreSQL alike, are in package store (*store.Store implements it;
// store/accounts.go); this package decides what they mean.
type Rows interface {
	InsertUser(ctx context.Context, name string) (id int64, inserted bool, err error)
	SetDisabled(ctx context.Context, t store.OwnerTable, name string, disabled bool) (int64, error)
	InsertToken(ctx context.Context, t store.OwnerTable, name string, sandbox bool, hash string, capabilities []string) error
	LookupToken(ctx context.Context, hash string) (store.TokenRecord, error)
	DeleteToken(ctx context.Context, hash string) (int64, error)
	DeleteUserToken(ctx context.Context, id, userID int64) (int64, error)
	TouchToken(ctx context.Context, id int64, stamp string) error
	InsertSession(ctx context.Context, hash, created, expires string) error
	InsertUserSession(ctx context.Context, hash, created, expires string, tokenID int64) (id int64, inserted bool, err error)
	DeleteSession(ctx context.Context, hash string) (int64, error)
	LookupSession(ctx context.Context, hash, now string) (store.SessionRecord, error)
	PurgeSessions(ctx context.Context, now string) (int64, error)
	UserID(ctx context.Context, name string) (int64, error)
	ListUsers(ctx context.Context, now string) ([]store.UserRecord, error)
	ListUserTokens(ctx context.Context, userID int64) ([]store.TokenInfoRecord, error)
}

var _ Rows = (*store.Store)(nil)

// New returns the accounts kept in s. s must stay open while they are used.
func New(s *store.Store, opts ...Option) *Accounts {
	a := &Accounts{db: s, now: time.Now}
	for _, o := range opts {
		o(a)
	}
	return a
}

// CreateUser makes an enabled account and returns its id.
func (a *Accounts) CreateUser(ctx context.Context, name string) (int64, error) {
	if !validName.MatchString(name) {
		return 0, ErrInvalidName
	}
	id, inserted, err := a.db.InsertUser(ctx, name)
	switch {
	case err != nil:
		return 0, fmt.Errorf("creating user: %w", err)
	case !inserted:
		return 0, ErrUserExists
	}
	return id, nil
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

// DisableApp disables the named app: from the moment it returns, every
// token of the app fails with ErrDisabled. Disabling a disabled app
// succeeds and changes nothing.
func (a *Accounts) DisableApp(ctx context.Context, name string) error {
	return a.setAppDisabled(ctx, name, true)
}

// EnableApp enables the named app again; its tokens work again. Enabling an
// enabled app succeeds and changes nothing.
func (a *Accounts) EnableApp(ctx context.Context, name string) error {
	return a.setAppDisabled(ctx, name, false)
}

func (a *Accounts) setDisabled(ctx context.Context, name string, disabled bool) error {
	return a.update(ctx, store.Users, name, disabled, ErrNoSuchUser)
}

func (a *Accounts) setAppDisabled(ctx context.Context, name string, disabled bool) error {
	return a.update(ctx, store.Apps, name, disabled, ErrNoSuchApp)
}

// update sets the disabled flag of the row of table named name, and
// returns missing when there is no such row.
func (a *Accounts) update(ctx context.Context, table store.OwnerTable, name string, disabled bool, missing error) error {
	if !validName.MatchString(name) {
		return missing
	}
	// SQLite counts a row the UPDATE matched as changed even when the value
	// stays the same, so zero rows means no such row. The cache is cleared
	// after the change, whatever the outcome, so that no token of the row
	// answers from it afterwards.
	defer a.cache.clear()
	n, err := a.db.SetDisabled(ctx, table, name, disabled)
	if err != nil {
		return fmt.Errorf("updating %s: %w", name, err)
	}
	if n == 0 {
		return missing
	}
	return nil
}

// CreateToken makes a new token, with no capability, for the named account
// and returns its plaintext, the only copy there will be. The account is
// created first when there is none by that name: issuing the first token is
// how an operator makes an account, in one command. A disabled account gets
// no new token (ErrDisabled); enable it first. The account's other tokens
// are unchanged.
func (a *Accounts) CreateToken(ctx context.Context, userName string) (string, error) {
	return a.CreateUserToken(ctx, userName, nil)
}

// CreateUserToken is CreateToken with capabilities granted to the new token
// alone. Each must pass CheckCapability (ErrInvalidCapability,
// ErrUnknownCapability); repeats count once.
func (a *Accounts) CreateUserToken(ctx context.Context, userName string, capabilities []string) (string, error) {
	return a.createToken(ctx, "users", userName, capabilities, false)
}

// CreateAppToken makes a client-credentials token for the named app (tier
// app) and returns its plaintext, the only copy there will be. The app is
// created first when there is none by that name; a disabled app gets no new
// token (ErrDisabled). capabilities are granted to this token alone, as for
// CreateUserToken. A sandbox token is marked so that the guard gives it the
// sandbox allowance, and holds no capability: asking for one with sandbox is
// ErrSandboxCapability.
func (a *Accounts) CreateAppToken(ctx context.Context, appName string, capabilities []string, sandbox bool) (string, error) {
	if sandbox && len(capabilities) > 0 {
		return "", ErrSandboxCapability
	}
	return a.createToken(ctx, "apps", appName, capabilities, sandbox)
}

// createToken makes a token for the named row of table, users or apps,
// creating the row when missing, and grants it capabilities.
func (a *Accounts) createToken(ctx context.Context, table, name string, capabilities []string, sandbox bool) (string, error) {
	if !validName.MatchString(name) {
		return "", ErrInvalidName
	}
	caps, err := normalizeCapabilities(capabilities)
	if err != nil {
		return "", err
	}
	raw := make([]byte, tokenBytes)
	rand.Read(raw) // never fails: crypto/rand crashes the program instead
	token := TokenPrefix + tokenEncoding.EncodeToString(raw)

	switch err := a.db.InsertToken(ctx, store.OwnerTable(table), name, sandbox, hashToken(token), caps); {
	case errors.Is(err, store.ErrOwnerDisabled):
		return "", ErrDisabled
	case err != nil:
		return "", fmt.Errorf("creating token: %w", err)
	}
	return token, nil
}

// Authenticate returns the caller token authenticates: a user or an app,
// with the token's capabilities and sandbox flag. It fails with
// ErrInvalidToken when token is malformed or unknown and with ErrDisabled
// when its account or app is disabled; any other error is the database's.
//
// It records the time of use in the token's last_used_at, at most once a
// minute per token. That write is bookkeeping: when it fails, the token
// still authenticates.
//
// With [WithCache], a token resolved less than the TTL ago is answered from
// memory, without the database; one used after half the TTL is looked up
// again (and its last_used_at written) in the background, off the request.
// Otherwise the lookup and the bookkeeping are bounded by [store.Budget]:
// when the database is too busy to answer within it, the error wraps
// [store.ErrBusy].
func (a *Accounts) Authenticate(ctx context.Context, token string) (*Principal, error) {
	if !wellFormed(token) {
		return nil, ErrInvalidToken
	}
	hash := hashToken(token)
	k := "t" + hash
	if e, ok, refresh := a.cache.get(k, a.now()); ok {
		if refresh {
			go a.refresh(k, func(ctx context.Context) (cached, error) {
				p, err := a.lookupToken(ctx, hash)
				return cached{principal: p}, err
			})
		}
		return clonePrincipal(e.principal), nil
	}
	gen := a.cache.generation()
	ctx, cancel := store.Budget(ctx)
	defer cancel()
	p, err := a.lookupToken(ctx, hash)
	if err != nil {
		return nil, err
	}
	a.cache.put(k, cached{principal: clonePrincipal(p)}, a.now(), gen)
	return p, nil
}

// refresh looks the credential of cache key k up again with lookup, in
// the goroutine of its own that a cache hit started, within [store.Budget]:
// it replaces the entry, takes it out when the credential is no longer
// valid (ErrInvalidToken, ErrDisabled, ErrInvalidSession), and leaves it to
// expire on any other error (the database busy or closed).
func (a *Accounts) refresh(k string, lookup func(context.Context) (cached, error)) {
	defer a.cache.done(k)
	gen := a.cache.generation()
	ctx, cancel := store.Budget(context.Background())
	defer cancel()
	e, err := lookup(ctx)
	switch {
	case err == nil:
		a.cache.put(k, e, a.now(), gen)
	case errors.Is(err, ErrInvalidToken), errors.Is(err, ErrDisabled), errors.Is(err, ErrInvalidSession):
		a.cache.drop(k)
	}
}

// lookupToken reads the token of hash, its account or app and its
// capabilities in one query, and does the last_used_at bookkeeping, under
// ctx.
func (a *Accounts) lookupToken(ctx context.Context, hash string) (*Principal, error) {
	// The lookup compares hashes in an index, in time that depends on the
	// bytes compared, and that is safe: the caller chooses the token, not
	// its SHA-256, and cannot steer the hash towards a stored one byte by
	// byte, so timing tells nothing about any stored token. A constant-time
	// compare would protect a plaintext secret; none is stored.
	var p Principal
	r, err := a.db.LookupToken(ctx, hash)
	p.TokenID, p.Sandbox = r.ID, r.Sandbox
	userID, userName, appID, appName, disabled, lastUsed, caps := r.UserID, r.UserName, r.AppID, r.AppName, r.Disabled, r.LastUsed, r.Capabilities
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, ErrInvalidToken
	case store.Busy(ctx, err):
		return nil, fmt.Errorf("authenticating: %w: %w", store.ErrBusy, err)
	case err != nil:
		return nil, fmt.Errorf("authenticating: %w", err)
	case disabled:
		return nil, ErrDisabled
	}
	if userID.Valid {
		p.Tier, p.UserID, p.UserName = TierUser, userID.Int64, userName.String
		p.Key = "user:" + strconv.FormatInt(p.UserID, 10)
	} else {
		p.Tier, p.AppID, p.AppName = TierApp, appID.Int64, appName.String
		p.Key = "app:" + strconv.FormatInt(p.AppID, 10)
	}
	if caps.Valid {
		p.Capabilities = strings.Fields(caps.String)
		slices.Sort(p.Capabilities)
	}
	a.touch(ctx, p.TokenID, lastUsed)
	return &p, nil
}

// RevokeToken deletes token, with its capabilities and the browser
// sessions signed in with it: from the moment it returns the token fails
// with ErrInvalidToken in this process, its cache entries gone; another process's cache forgets it within its TTL. Revoking
// a malformed, unknown or already revoked token is ErrInvalidToken. The
// token's account or app and its other tokens are unchanged.
func (a *Accounts) RevokeToken(ctx context.Context, token string) error {
	if !wellFormed(token) {
		return ErrInvalidToken
	}
	hash := hashToken(token)
	// The entries go after the change, whatever the outcome, so that no
	// lookup that read the row before the delete answers from it; all of
	// them, since the sessions signed in with the token (deleted with it)
	// are cached under their own keys.
	defer a.cache.clear()
	if n, err := a.db.DeleteToken(ctx, hash); err != nil {
		return fmt.Errorf("revoking a token: %w", err)
	} else if n == 0 {
		return ErrInvalidToken
	}
	return nil
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
	_ = a.db.TouchToken(ctx, tokenID, stamp)
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
