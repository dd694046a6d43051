package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolhost/toolhost/internal/auth"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/run"
)

// signIns adapts the accounts to the application layer's browser sign-in
// (run.SignIns, docs/hub-auth.md): a credential that does not resolve is
// guard.ErrInvalidCredentials, a busy store guard.ErrUnavailable.
type signIns struct{ a *auth.Accounts }

var _ run.SignIns = signIns{}

func (s signIns) SignIn(ctx context.Context, token string) (string, run.SignedIn, error) {
	value, sess, err := s.a.CreateUserSession(ctx, token)
	if err != nil {
		return "", run.SignedIn{}, signInError(err)
	}
	return value, signedIn(sess), nil
}

func (s signIns) SignOut(ctx context.Context, value string) error {
	return signInError(s.a.DeleteSession(ctx, value))
}

func (s signIns) Session(ctx context.Context, value string) (run.SignedIn, error) {
	sess, err := s.a.Session(ctx, value)
	if err != nil {
		return run.SignedIn{}, signInError(err)
	}
	return signedIn(sess), nil
}

// signedIn describes sess for the application layer.
func signedIn(sess *auth.Session) run.SignedIn {
	si := run.SignedIn{Tier: guard.Session, Expires: sess.Expires}
	if sess.SignedIn() {
		si.Tier, si.User = guard.User, sess.UserName
	}
	return si
}

// signInError marks the accounts' errors as the guard's.
func signInError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, auth.ErrInvalidToken), errors.Is(err, auth.ErrDisabled), errors.Is(err, auth.ErrInvalidSession):
		return fmt.Errorf("%w: %w", guard.ErrInvalidCredentials, err)
	}
	return unavailable(err)
}
