package run

import (
	"context"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/toolhost/toolhost/internal/abuse"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// The abuse rules (ADR-027, "Abuse log": "runs that trip an abuse rule";
// docs/abuse.md, "Abuse rules"). Each is recorded as an abuse row of its
// own reason, beside the refusal rows, so that an operator finds the
// callers worth acting on without reading every refusal.
const (
	// RuleProbeRefusedTarget: a probe aimed at an address the probes
	// refuse (private, loopback, link-local, cloud metadata, reserved…),
	// which the probe engine reports with the issue IssueTargetRefused.
	RuleProbeRefusedTarget = "rule.probe_refused_target"
	// RuleCredentialBurst: RuleCredentialBurstCount or more requests with
	// credentials that do not resolve from one caller (address, IPv6 by
	// its /64) within RuleWindow; every such request from the threshold on
	// is recorded.
	RuleCredentialBurst = "rule.bad_credentials_burst"
	// RuleQuotaStreak: RuleQuotaStreakCount or more quota or throttle
	// refusals in a row for one caller key, without an admission between
	// them (a client that ignores Retry-After); every refusal from the
	// threshold on is recorded.
	RuleQuotaStreak = "rule.quota_refusals_in_a_row"

	// IssueTargetRefused is the issue code of a probe's refused target.
	IssueTargetRefused = "target_refused"
)

// The rules' thresholds.
const (
	RuleWindow               = time.Minute
	RuleCredentialBurstCount = 5
	RuleQuotaStreakCount     = 5
	// ruleMaxKeys bounds each rule's table; past it, expired entries are
	// dropped, then the table is cleared (a flood of distinct callers is
	// one row each in the refusals anyway).
	ruleMaxKeys = 4096
)

// rules holds the state of the rules that count: in memory, per process,
// keyed by caller key (never an address).
type rules struct {
	mu     sync.Mutex
	creds  map[string]*burst
	streak map[string]int
}

type burst struct {
	start time.Time
	n     int
}

func newRules() *rules {
	return &rules{creds: make(map[string]*burst), streak: make(map[string]int)}
}

// badCredential counts a request with bad credentials from ip and reports
// whether the burst rule is tripped.
func (r *rules) badCredential(ip netip.Addr, now time.Time) bool {
	k := guard.AddrKey(ip)
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.creds[k]
	if b == nil || now.Sub(b.start) >= RuleWindow {
		if len(r.creds) >= ruleMaxKeys {
			for key, v := range r.creds {
				if now.Sub(v.start) >= RuleWindow {
					delete(r.creds, key)
				}
			}
			if len(r.creds) >= ruleMaxKeys {
				clear(r.creds)
			}
		}
		b = &burst{start: now}
		r.creds[k] = b
	}
	b.n++
	return b.n >= RuleCredentialBurstCount
}

// credentialBlock is how long the credential-burst rule keeps refusing
// sign-ins from ip: the rest of the window in which it was tripped, or 0
// when it is not.
func (r *rules) credentialBlock(ip netip.Addr, now time.Time) time.Duration {
	if !ip.IsValid() {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.creds[guard.AddrKey(ip)]
	if b == nil || b.n < RuleCredentialBurstCount {
		return 0
	}
	return max(RuleWindow-now.Sub(b.start), 0)
}

// quota counts a decision of key: refused (a quota or throttle refusal)
// lengthens its streak and reports whether the streak rule is tripped;
// anything else ends the streak.
func (r *rules) quota(key string, refused bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !refused {
		delete(r.streak, key)
		return false
	}
	if _, ok := r.streak[key]; !ok && len(r.streak) >= ruleMaxKeys {
		clear(r.streak)
	}
	r.streak[key]++
	return r.streak[key] >= RuleQuotaStreakCount
}

// quotaRefusal reports whether reason is one the streak rule counts.
func quotaRefusal(reason guard.Reason) bool {
	return reason == guard.ReasonQuotaExceeded || reason == guard.ReasonThrottled
}

// afterRun applies the rules that look at a run's outcome: a probe whose
// target was refused.
func (a *App) afterRun(ctx context.Context, o Origin, svc *registry.Service, e *toolerr.Error) {
	if e == nil || !svc.Platform().Egress {
		return
	}
	if slices.ContainsFunc(e.Issues, func(i toolerr.Issue) bool { return i.Code == IssueTargetRefused }) {
		a.record(ctx, abuse.Entry{IP: o.Caller.IP, Principal: o.Caller.Principal, Tool: svc.Code(), Reason: RuleProbeRefusedTarget, RequestID: o.RequestID})
	}
}
