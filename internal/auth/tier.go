package auth

import "strconv"

// Tier is how much the platform trusts a caller, lowest first. Tiers are
// ordered: a tool that needs at least a session admits any tier >=
// TierSession.
type Tier int

const (
	// TierAnonymous is a caller without a token or a session; the guard
	// keys it by its address. No Principal has this tier.
	TierAnonymous Tier = iota
	// TierSession is a browser holding a session cookie; no account.
	TierSession
	// TierUser is a caller holding an account's token.
	TierUser
	// TierApp is an application holding a client-credentials token.
	TierApp
)

// String returns "anonymous", "session", "user" or "app".
func (t Tier) String() string {
	switch t {
	case TierAnonymous:
		return "anonymous"
	case TierSession:
		return "session"
	case TierUser:
		return "user"
	case TierApp:
		return "app"
	}
	return "tier(" + strconv.Itoa(int(t)) + ")"
}
