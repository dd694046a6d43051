package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolhost/toolhost/internal/abuse"
	"github.com/toolhost/toolhost/internal/auth"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/metrics"
	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/supervisor"
)

// credentials adapts the accounts to the guard: a token resolves to a
// user or app identity with the token's capabilities, a session cookie to
// a session identity. The principal is the account's, app's or session's
// key ("user:ID", "app:ID", "session:ID").
type credentials struct{ a *auth.Accounts }

func (c credentials) Token(ctx context.Context, token string) (guard.Identity, error) {
	pr, err := c.a.Authenticate(ctx, token)
	if err != nil {
		return guard.Identity{}, unavailable(err)
	}
	return identity(pr)
}

func (c credentials) Session(ctx context.Context, value string) (guard.Identity, error) {
	sess, err := c.a.Session(ctx, value)
	if err != nil {
		return guard.Identity{}, unavailable(err)
	}
	return identity(sess.Principal())
}

// unavailable marks an error of a store too busy to answer (store.ErrBusy)
// as guard.ErrUnavailable, which the API answers 503 rather than 401.
func unavailable(err error) error {
	if errors.Is(err, store.ErrBusy) {
		return fmt.Errorf("%w: %w", guard.ErrUnavailable, err)
	}
	return err
}

// nativeWorkers is the supervisor's Stats for diagnostics; nil without
// natives.
func nativeWorkers(sup *supervisor.Supervisor) func() supervisor.Stats {
	if sup == nil {
		return nil
	}
	return sup.Stats
}

// spareStats reads the supervisor's spare workers for /metrics at each
// scrape; nil without natives.
func spareStats(sup *supervisor.Supervisor) func() metrics.Spares {
	if sup == nil {
		return nil
	}
	return func() metrics.Spares {
		st := sup.Stats()
		return metrics.Spares{Running: st.Jobs, Ready: st.SparesReady, Starting: st.SparesStarting,
			JobCgroups: st.JobCgroups, Used: st.SparesUsed, Fresh: st.FreshWorkers, Lost: st.SparesLost}
	}
}

// abuseCollectors are the abuse log's counters in /metrics, read at each
// scrape through l, which New sets after the metrics are made.
func abuseCollectors(l **abuse.Log) []prometheus.Collector {
	stat := func(f func(abuse.Stats) uint64) func() float64 {
		return func() float64 {
			if *l == nil {
				return 0
			}
			return float64(f((*l).Stats()))
		}
	}
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "toolhost_abuse_dropped_total",
			Help: "Abuse-log events dropped because the pending rows were full (or could not be written at shutdown).",
		}, stat(func(s abuse.Stats) uint64 { return s.Dropped })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "toolhost_abuse_events_written_total",
			Help: "Abuse-log events stored by the log's writer.",
		}, stat(func(s abuse.Stats) uint64 { return s.Written })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "toolhost_abuse_flush_errors_total",
			Help: "Abuse-log flushes that failed (the database busy) and were retried.",
		}, stat(func(s abuse.Stats) uint64 { return s.FlushErrors })),
	}
}

// identity maps an auth principal to a guard identity; the tiers share
// their names.
func identity(pr *auth.Principal) (guard.Identity, error) {
	var tier guard.Tier
	if err := tier.UnmarshalText([]byte(pr.Tier.String())); err != nil {
		return guard.Identity{}, fmt.Errorf("mapping the tier of %s: %w", pr.Key, err)
	}
	return guard.Identity{Tier: tier, Principal: pr.Key, Capabilities: pr.Capabilities, Sandbox: pr.Sandbox}, nil
}
