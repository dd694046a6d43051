package run

import (
	"context"
	"errors"
	"time"

	"github.com/toolhost/toolhost/internal/guard"
)

// SessionIssuer makes browser sessions; *auth.Accounts implements it.
type SessionIssuer interface {
	// CreateSession returns a new session's cookie value and when it
	// expires.
	CreateSession(ctx context.Context) (value string, expires time.Time, err error)
}

// ErrNoSession is returned by IssueSession when no session is issued: the
// App has no SessionIssuer, the caller is not anonymous, or its address
// has had its sessions for now (SessionsPerAddress).
var ErrNoSession = errors.New("run: no session issued")

// SessionsPerAddress bounds the sessions issued to one client address
// (IPv6 by its /64): a burst of this many, then one a minute. A session
// has an allowance of its own, so minting sessions must not be a way
// around the anonymous allowance.
const SessionsPerAddress = 5

// IssueSession issues a browser session to the anonymous caller of o
// (ADR-027: "session: the browser's ov_tools_jobs cookie"), whose request
// presented p, and returns the cookie value, its expiry and the request's
// origin as that session. It is safe for concurrent use.
func (a *App) IssueSession(ctx context.Context, p guard.Presented, o Origin) (string, time.Time, Origin, error) {
	if a.cfg.Sessions == nil || a.cfg.Credentials == nil || !o.Anonymous() {
		return "", time.Time{}, o, ErrNoSession
	}
	allow := guard.Allowance{Burst: SessionsPerAddress, PerMinute: 1}
	t, err := a.sessions.Take(ctx, "session\x00"+guard.AddrKey(o.Caller.IP), allow, 1, time.Now())
	if err != nil || !t.OK {
		return "", time.Time{}, o, ErrNoSession
	}
	value, expires, err := a.cfg.Sessions.CreateSession(ctx)
	if err != nil {
		t.Undo()
		return "", time.Time{}, o, err
	}
	p.Authorization = ""
	p.Cookie = func(name string) string {
		if name == a.guard.SessionCookie() {
			return value
		}
		return ""
	}
	c, err := a.guard.Resolve(ctx, p, a.cfg.Credentials)
	if err != nil {
		return "", time.Time{}, o, err
	}
	return value, expires, Origin{Caller: c, RequestID: o.RequestID}, nil
}
