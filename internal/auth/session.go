package auth

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/toolhost/toolhost/internal/store"
)

// SessionCookie is the default name of the cookie that carries a session
// value, ADR-027's ov_tools_jobs ("session: the browser's ov_tools_jobs
// cookie"); the server's name is configurable. The API sets it (HttpOnly,
// SameSite=Strict, Secure behind TLS, Path=/, Expires as CreateSession
// returns); this package never touches HTTP.
const SessionCookie = "ov_tools_jobs"

// SessionPrefix starts every session value. It differs from TokenPrefix,
// so that a session value presented as a token, or a token as a session,
// is refused by its shape.
const SessionPrefix = "ths_"

// SessionTTL is how long a session lasts from when it is made. The expiry
// is fixed, not sliding: the cookie's Expires and the database agree from
// the first response, and nothing is written on use.
const SessionTTL = 30 * 24 * time.Hour

// sessionLen is the length of a session value: the prefix and 32 random
// bytes in unpadded base64url.
const sessionLen = len(SessionPrefix) + (tokenBytes*8+5)/6

// SignInTTL is how long a signed-in session lasts from sign-in
// (CreateUserSession): fixed, not sliding, shorter than an anonymous
// session's SessionTTL because it carries an account.
const SignInTTL = 12 * time.Hour

// Session is a browser session: an anonymous one (tier session, no
// account), or a signed-in one that belongs to the account UserID and to
// the token it was signed in with (docs/hub-auth.md).
type Session struct {
	ID      int64
	Expires time.Time // UTC, millisecond precision
	// UserID and UserName are the signed-in account's; 0 and "" for an
	// anonymous session.
	UserID   int64
	UserName string
}

// SignedIn reports whether the session belongs to an account.
func (s *Session) SignedIn() bool { return s.UserID != 0 }

// Principal returns the session as a caller. An anonymous session is
// TierSession, Key "session:ID"; a signed-in one is its account's caller,
// TierUser, Key "user:ID", with SessionID set. Neither holds a
// capability: capabilities are granted to tokens, not carried into a
// browser.
func (s *Session) Principal() *Principal {
	if s.SignedIn() {
		return &Principal{
			Tier:      TierUser,
			Key:       "user:" + strconv.FormatInt(s.UserID, 10),
			UserID:    s.UserID,
			UserName:  s.UserName,
			SessionID: s.ID,
		}
	}
	return &Principal{
		Tier:      TierSession,
		Key:       "session:" + strconv.FormatInt(s.ID, 10),
		SessionID: s.ID,
	}
}

// CreateSession makes a new session and returns the cookie value, the only
// copy there will be (the database keeps its SHA-256), and when it expires:
// SessionTTL from now. The value is SessionPrefix and 43 characters of
// unpadded base64url, safe in a cookie as it is.
func (a *Accounts) CreateSession(ctx context.Context) (value string, expires time.Time, err error) {
	raw := make([]byte, tokenBytes)
	rand.Read(raw) // never fails: crypto/rand crashes the program instead
	value = SessionPrefix + tokenEncoding.EncodeToString(raw)
	now := a.now().UTC().Truncate(time.Millisecond)
	expires = now.Add(SessionTTL)
	if err = a.db.InsertSession(ctx, hashToken(value), now.Format(timeLayout), expires.Format(timeLayout)); err != nil {
		return "", time.Time{}, fmt.Errorf("creating session: %w", err)
	}
	return value, expires, nil
}

// CreateUserSession signs a browser in with token, an enabled account's
// token, and returns the new session's cookie value (the only copy; the
// database keeps its SHA-256) and the session: SignInTTL from now, owned by
// the token's account and by the token, so that revoking the token or
// deleting the account ends it. A malformed, unknown or revoked token, or an
// app's, is ErrInvalidToken; a disabled account's is ErrDisabled; an error
// wrapping [store.ErrBusy] means the database was too busy to check it.
func (a *Accounts) CreateUserSession(ctx context.Context, token string) (string, *Session, error) {
	p, err := a.Authenticate(ctx, token)
	if err != nil {
		return "", nil, err
	}
	if p.Tier != TierUser {
		return "", nil, ErrInvalidToken
	}
	raw := make([]byte, tokenBytes)
	rand.Read(raw) // never fails: crypto/rand crashes the program instead
	value := SessionPrefix + tokenEncoding.EncodeToString(raw)
	now := a.now().UTC().Truncate(time.Millisecond)
	s := &Session{Expires: now.Add(SignInTTL), UserID: p.UserID, UserName: p.UserName}
	// The INSERT reads the token again: one revoked since Authenticate
	// (which may have answered from the cache) inserts nothing, and a
	// disabled account's neither.
	id, inserted, err := a.db.InsertUserSession(ctx, hashToken(value), now.Format(timeLayout), s.Expires.Format(timeLayout), p.TokenID)
	switch {
	case err != nil:
		return "", nil, fmt.Errorf("creating session: %w", err)
	case !inserted:
		return "", nil, ErrInvalidToken
	}
	s.ID = id
	return value, s, nil
}

// DeleteSession ends the session value names (sign-out): from the moment
// it returns, the value fails with ErrInvalidSession in this process; another
// process's cache forgets it within its TTL. Deleting a malformed, unknown
// or expired session is ErrInvalidSession.
func (a *Accounts) DeleteSession(ctx context.Context, value string) error {
	if !wellFormedSession(value) {
		return ErrInvalidSession
	}
	hash := hashToken(value)
	defer a.cache.drop("s" + hash)
	if n, err := a.db.DeleteSession(ctx, hash); err != nil {
		return fmt.Errorf("deleting session: %w", err)
	} else if n == 0 {
		return ErrInvalidSession
	}
	return nil
}

// Session returns the session value names. It fails with ErrInvalidSession
// when value is malformed, unknown or expired, and with ErrDisabled when it
// is a signed-in session of a disabled account; any other error is the
// database's, wrapping [store.ErrBusy] when it was too busy to answer
// within [store.Budget]. It only reads. With [WithCache], a session read
// less than the TTL ago is answered from memory, never past its expiry, and
// one used after half the TTL is read again in the background.
func (a *Accounts) Session(ctx context.Context, value string) (*Session, error) {
	if !wellFormedSession(value) {
		return nil, ErrInvalidSession
	}
	hash := hashToken(value)
	k := "s" + hash
	if e, ok, refresh := a.cache.get(k, a.now()); ok {
		if refresh {
			go a.refresh(k, func(ctx context.Context) (cached, error) {
				s, err := a.lookupSession(ctx, hash)
				return cached{session: s}, err
			})
		}
		s := *e.session
		return &s, nil
	}
	gen := a.cache.generation()
	ctx, cancel := store.Budget(ctx)
	defer cancel()
	s, err := a.lookupSession(ctx, hash)
	if err != nil {
		return nil, err
	}
	c := *s
	a.cache.put(k, cached{session: &c}, a.now(), gen)
	return s, nil
}

// lookupSession reads the unexpired session of hash under ctx.
func (a *Accounts) lookupSession(ctx context.Context, hash string) (*Session, error) {
	now := a.now().UTC().Format(timeLayout)
	// As for tokens, the lookup is by hash, so its timing tells nothing.
	r, err := a.db.LookupSession(ctx, hash, now)
	s := Session{ID: r.ID}
	expires, userID, userName, disabled := r.Expires, r.UserID, r.UserName, r.Disabled
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, ErrInvalidSession
	case store.Busy(ctx, err):
		return nil, fmt.Errorf("reading session: %w: %w", store.ErrBusy, err)
	case err != nil:
		return nil, fmt.Errorf("reading session: %w", err)
	case disabled.Valid && disabled.Bool:
		return nil, ErrDisabled
	}
	s.UserID, s.UserName = userID.Int64, userName.String
	if s.Expires, err = time.Parse(timeLayout, expires); err != nil {
		return nil, fmt.Errorf("reading session: %w", err)
	}
	return &s, nil
}

// PurgeSessions deletes the sessions that have expired and returns how
// many it deleted. Ids are never given again, so what an expired session
// owned stays unreachable. It is safe to call at any time, from any number
// of goroutines.
func (a *Accounts) PurgeSessions(ctx context.Context) (int64, error) {
	n, err := a.db.PurgeSessions(ctx, a.now().UTC().Format(timeLayout))
	if err != nil {
		return 0, fmt.Errorf("purging sessions: %w", err)
	}
	return n, nil
}

// wellFormedSession reports whether value has the shape CreateSession
// makes.
func wellFormedSession(value string) bool {
	if len(value) != sessionLen || !strings.HasPrefix(value, SessionPrefix) {
		return false
	}
	_, err := tokenEncoding.DecodeString(value[len(SessionPrefix):])
	return err == nil
}
