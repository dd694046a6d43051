package run

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/toolhost/toolhost/internal/abuse"
	"github.com/toolhost/toolhost/internal/executor"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/metrics"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
)

// Executor is the per-process executor runs go through.
type Executor interface {
	Compute(ctx context.Context, b executor.Batch) (*executor.BatchResult, error)
	BatchRequestTimeout(items []executor.Item) time.Duration
}

// AbuseLog records refused and reported runs; *abuse.Log implements it.
// Record is called on the request path of every refusal, so it must not
// wait on a database: *abuse.Log counts in memory and writes off the path,
// answering abuse.ErrDropped (counted, not logged here) when it is full.
type AbuseLog interface {
	Record(ctx context.Context, e abuse.Entry) error
}

// Config is what the application layer runs on.
type Config struct {
	// Platform is the platform policy; zero means policy.DefaultPlatform().
	Platform policy.Platform
	// Snapshot returns the live registry generation. Required.
	Snapshot func() *registry.Snapshot
	// Started is closed once the tools folder's first scan is published
	// (registry.Registry.Started); until then a job type no tool declares
	// yet is waited for, not refused (ResolveJob). nil is started.
	Started <-chan struct{}
	// Executor runs items. Required.
	Executor Executor
	// Guard admits runs; nil makes one with the defaults (report mode, no
	// trusted proxy, the default quota table).
	Guard *guard.Guard
	// Credentials resolves tokens and sessions for the guard; nil treats
	// every caller as anonymous.
	Credentials guard.Credentials
	// Sessions issues browser sessions (IssueSession); nil issues none.
	Sessions SessionIssuer
	// SignIns signs browsers in with a user's token and out again
	// (signin.go); nil refuses every sign-in as unauthenticated.
	SignIns SignIns
	// Abuse receives refused and reported decisions; nil logs nothing.
	Abuse AbuseLog
	// Metrics counts runs, refusals and quota decisions; nil counts
	// nothing.
	Metrics *metrics.Metrics
	// Logger receives what operators need; nil discards it.
	Logger *slog.Logger
	// OwnerKey is the HMAC key that turns an anonymous caller's address
	// into the owner of its jobs; nil makes a random one, and anonymous
	// callers then lose their jobs with the process.
	OwnerKey []byte
}

// App is the application layer of one process. Create it with New; it is
// safe for concurrent use.
type App struct {
	cfg   Config
	guard *guard.Guard
	log   *slog.Logger
	rules *rules // the abuse rules' counts (rules.go)
	// sessions bounds the sessions issued per address (session.go).
	sessions *guard.MemoryLimiter
	// jobs is the jobs subsystem of the job use cases (UseJobs); nil
	// refuses them.
	jobs *jobs.Service
	// ownerKey is Config.OwnerKey or a random key (owner).
	ownerKey []byte
	// uploads bounds the upload forms read at once (body.go).
	uploads uploadGate
	// batches keeps the seed-000 per-principal batch limits of the
	// compute batches (compute.go).
	batches batchLimits
}

// New returns an App for cfg.
func New(cfg Config) (*App, error) {
	if cfg.Snapshot == nil || cfg.Executor == nil {
		return nil, errors.New("run: Config.Snapshot and Config.Executor are required")
	}
	if cfg.Platform == (policy.Platform{}) {
		cfg.Platform = policy.DefaultPlatform()
	}
	a := &App{cfg: cfg, guard: cfg.Guard, log: cfg.Logger, rules: newRules(), sessions: guard.NewMemoryLimiter()}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.ownerKey = cfg.OwnerKey; a.ownerKey == nil {
		a.ownerKey = make([]byte, 32)
		if _, err := rand.Read(a.ownerKey); err != nil {
			return nil, fmt.Errorf("run: no randomness for the owner key: %w", err)
		}
	}
	if a.guard == nil {
		g, err := guard.New(guard.Config{})
		if err != nil {
			return nil, fmt.Errorf("run: making the default guard: %w", err)
		}
		a.guard = g
	}
	return a, nil
}

// Platform returns the platform policy runs are bounded by.
func (a *App) Platform() policy.Platform { return a.cfg.Platform }

// Snapshot returns the live registry generation.
func (a *App) Snapshot() *registry.Snapshot { return a.cfg.Snapshot() }

// Guard returns the guard runs are admitted by.
func (a *App) Guard() *guard.Guard { return a.guard }

// SessionCookie and TokenCookie are the names of the cookies a browser's
// session and an account's token are read from.
func (a *App) SessionCookie() string { return a.guard.SessionCookie() }
func (a *App) TokenCookie() string   { return a.guard.TokenCookie() }

// TrustedPeer reports whether a request's direct peer is one of the
// trusted proxies, whose forwarding headers are believed.
func (a *App) TrustedPeer(peer string) bool { return a.guard.TrustedPeer(peer) }

// Bearer returns the token of an Authorization value of the Bearer
// scheme, and false for any other value.
func Bearer(h string) (string, bool) { return guard.Bearer(h) }

// Anonymous reports whether o's caller presented no credentials.
func (o Origin) Anonymous() bool { return o.Caller.Tier == guard.Anonymous }

// Origin is who asks for a run and in which request: resolved once per
// request by the route ([App.Resolve]) and carried to every decision,
// abuse row and log line the request causes.
type Origin struct {
	Caller guard.Caller
	// RequestID correlates the answer, the log lines and the abuse rows.
	RequestID string
}

// Resolve resolves the caller of a request that presents p, once per
// request. Credentials that do not resolve are an Unauthenticated refusal
// (abuse-logged and counted), never a downgrade to anonymous; a store too
// busy to check them is a StoreBusy refusal.
func (a *App) Resolve(ctx context.Context, p guard.Presented, requestID string) (Origin, error) {
	caller, err := a.guard.Resolve(ctx, p, a.cfg.Credentials)
	switch {
	case errors.Is(err, guard.ErrUnavailable):
		a.log.Warn("credential store busy", "request_id", requestID, "err", err)
		return Origin{}, &Refusal{Code: StoreBusy, RetryAfter: time.Second,
			Detail: "The credential store is busy; retry after the Retry-After."}
	case err != nil:
		a.record(ctx, abuse.Entry{IP: caller.IP, Reason: string(guard.ReasonUnauthenticated), RequestID: requestID})
		if caller.IP.IsValid() && a.rules.badCredential(caller.IP, time.Now()) {
			a.record(ctx, abuse.Entry{IP: caller.IP, Reason: RuleCredentialBurst, RequestID: requestID})
		}
		if m := a.cfg.Metrics; m != nil {
			m.CountRefusal(string(guard.ReasonUnauthenticated))
		}
		return Origin{}, &Refusal{Code: Unauthenticated, InvalidCredentials: true,
			Detail: "The credentials are not those of an active account, app or session."}
	}
	return Origin{Caller: caller, RequestID: requestID}, nil
}

// record counts one event in the abuse log, without waiting on its
// database. A failure is logged without the address and does not change
// the answer; a drop (the log's pending table is full, under a flood) is
// not logged, which would turn the flood into log lines: the log counts it
// (toolhost_abuse_dropped_total).
func (a *App) record(ctx context.Context, e abuse.Entry) {
	if a.cfg.Abuse == nil {
		return
	}
	if err := a.cfg.Abuse.Record(context.WithoutCancel(ctx), e); err != nil && !errors.Is(err, abuse.ErrDropped) {
		a.log.Warn("abuse log", "tool", e.Tool, "reason", e.Reason, "request_id", e.RequestID, "err", err)
	}
}
