package run

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/toolhost/toolhost/internal/abuse"
	"github.com/toolhost/toolhost/internal/guard"
)

// SignIns signs browsers in with a user's token and out again; the server
// adapts *auth.Accounts to it. Every method answers an error wrapping
// guard.ErrInvalidCredentials for a token or session value that does not
// resolve (malformed, unknown, revoked, expired, an app's token, a disabled
// account) and one wrapping guard.ErrUnavailable when the store cannot
// answer now.
type SignIns interface {
	// SignIn makes a signed-in session for the account of token and
	// returns its cookie value, the only copy.
	SignIn(ctx context.Context, token string) (value string, s SignedIn, err error)
	// SignOut deletes the session value names.
	SignOut(ctx context.Context, value string) error
	// Session describes the session value names, signed in or not.
	Session(ctx context.Context, value string) (SignedIn, error)
}

// SignedIn describes a browser session: whose it is and until when.
type SignedIn struct {
	// Tier is guard.User for a signed-in session, guard.Session for an
	// anonymous browser session.
	Tier guard.Tier
	// User is the signed-in account's name; "" for an anonymous session.
	User    string
	Expires time.Time
}

// SignIn signs the browser whose request presented p in with token and
// returns the session's cookie value and description. A token that does
// not resolve is an Unauthenticated refusal, abuse-logged and counted like
// a bad credential on any route; a store too busy to check it is a
// StoreBusy refusal. Once RuleCredentialBurstCount tokens that did not
// resolve have come from the caller's address within RuleWindow (the
// credential-burst rule), its sign-ins are Throttled until the window
// ends, whatever token they present, so that guessing tokens through the
// sign-in page costs a minute per handful and tells nothing.
func (a *App) SignIn(ctx context.Context, p guard.Presented, token, requestID string) (string, SignedIn, error) {
	if a.cfg.SignIns == nil {
		return "", SignedIn{}, &Refusal{Code: Unauthenticated, InvalidCredentials: true,
			Detail: "This server does not sign browsers in."}
	}
	ip := a.clientAddr(ctx, p)
	if wait := a.rules.credentialBlock(ip, time.Now()); wait > 0 {
		a.record(ctx, abuse.Entry{IP: ip, Reason: string(guard.ReasonThrottled), RequestID: requestID})
		if m := a.cfg.Metrics; m != nil {
			m.CountRefusal(string(guard.ReasonThrottled))
		}
		return "", SignedIn{}, &Refusal{Code: Throttled, RetryAfter: wait,
			Detail: "Too many tokens that are not an active account's came from this address; retry after the Retry-After."}
	}
	value, s, err := a.cfg.SignIns.SignIn(ctx, token)
	if err != nil {
		return "", SignedIn{}, a.signInRefusal(ctx, ip, requestID, err,
			"The token is not that of an active account.")
	}
	return value, s, nil
}

// clientAddr is the address of the client that presented p, behind the
// trusted proxies, as Resolve records it for a caller without
// credentials.
func (a *App) clientAddr(ctx context.Context, p guard.Presented) netip.Addr {
	p.Authorization, p.Cookie = "", nil
	anon, _ := a.guard.Resolve(ctx, p, nil)
	return anon.IP
}

// Session describes the browser session value names; a value that does
// not resolve is an Unauthenticated refusal (not abuse-logged: a browser
// holding an expired cookie is ordinary).
func (a *App) Session(ctx context.Context, value string) (SignedIn, error) {
	if a.cfg.SignIns == nil || value == "" {
		return SignedIn{}, &Refusal{Code: Unauthenticated, Detail: "No browser session."}
	}
	s, err := a.cfg.SignIns.Session(ctx, value)
	switch {
	case errors.Is(err, guard.ErrUnavailable):
		return SignedIn{}, storeBusy()
	case err != nil:
		return SignedIn{}, &Refusal{Code: Unauthenticated, InvalidCredentials: true,
			Detail: "The session has expired or was ended; sign in again."}
	}
	return s, nil
}

// SignOut ends the browser session value names. A value that does not
// resolve is not an error: there is nothing left to end. A signed-in
// user's session is ended only by a request that passed the CSRF check
// (csrfPassed), so that another site cannot sign a browser out: a
// CSRFFailed refusal otherwise. A store too busy to read or delete it is
// a StoreBusy refusal.
func (a *App) SignOut(ctx context.Context, value string, csrfPassed bool) error {
	if a.cfg.SignIns == nil || value == "" {
		return nil
	}
	si, err := a.Session(ctx, value)
	if r, ok := AsRefusal(err); ok && r.Code == StoreBusy {
		return err
	}
	if err == nil && si.Tier == guard.User && !csrfPassed {
		return refuse(CSRFFailed, "A state-changing request with the session cookie needs the same origin and the CSRF header equal to the CSRF cookie.")
	}
	err = a.cfg.SignIns.SignOut(ctx, value)
	switch {
	case errors.Is(err, guard.ErrUnavailable):
		return storeBusy()
	case errors.Is(err, guard.ErrInvalidCredentials):
		return nil
	}
	return err
}

// signInRefusal is the refusal of a sign-in that failed with err.
func (a *App) signInRefusal(ctx context.Context, ip netip.Addr, requestID string, err error, detail string) error {
	if errors.Is(err, guard.ErrUnavailable) {
		a.log.Warn("credential store busy", "request_id", requestID, "err", err)
		return storeBusy()
	}
	if !errors.Is(err, guard.ErrInvalidCredentials) {
		return err
	}
	a.record(ctx, abuse.Entry{IP: ip, Reason: string(guard.ReasonUnauthenticated), RequestID: requestID})
	if ip.IsValid() && a.rules.badCredential(ip, time.Now()) {
		a.record(ctx, abuse.Entry{IP: ip, Reason: RuleCredentialBurst, RequestID: requestID})
	}
	if m := a.cfg.Metrics; m != nil {
		m.CountRefusal(string(guard.ReasonUnauthenticated))
	}
	return &Refusal{Code: Unauthenticated, InvalidCredentials: true, Detail: detail}
}

// storeBusy is the refusal of a credential store too busy to answer.
func storeBusy() *Refusal {
	return &Refusal{Code: StoreBusy, RetryAfter: time.Second,
		Detail: "The credential store is busy; retry after the Retry-After."}
}
