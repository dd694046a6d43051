package run

import (
	"context"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolhost/toolhost/internal/abuse"
	"github.com/toolhost/toolhost/internal/executor"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/registry"
)

// Admission is an admitted run: the concurrency slots it holds and the
// rate-limit fields to answer with. Release it when the run ends; an
// admitted job (AdmitJob) hands its slots to the job (Slots) instead, and
// releases them only when no job was made. Release is idempotent.
type Admission struct {
	// Limits are the rate-limit fields of the quotas consulted.
	Limits guard.RateLimits
	// Slots are a job's leased slots, encoded for the job to hold
	// (jobs.Submission.Slots); "" for a run, or a job holding none.
	Slots   string
	release func()
	refund  func()
}

// Refund gives back the quota cost the run spent, for a run refused
// before its tool ran: a refused upload, an input or a reference the job
// cannot take. It does not release the slots (Release does). It is safe
// to call more than once, and on a nil Admission.
func (a *Admission) Refund() {
	if a != nil && a.refund != nil {
		a.refund()
	}
}

// Release frees the run's concurrency slots. It is safe to call more than
// once, and on a nil Admission.
func (a *Admission) Release() {
	if a != nil && a.release != nil {
		a.release()
	}
}

// guardRequest is what the guard needs of a run of svc with input.
func guardRequest(svc *registry.Service, input map[string]any) guard.Request {
	p := svc.Platform()
	req := guard.Request{Tool: svc.Code(), QuotaClass: p.QuotaClass, Cost: p.Cost, Anonymous: p.Anonymous,
		Capability: p.Capability, Egress: p.Egress, PerTargetPerMinute: p.PerTargetPerMinute}
	if p.Egress {
		req.Target = egressTarget(input)
		if req.Target == "" {
			// A bulk check: every target counts.
			for _, k := range []string{"hosts", "urls"} {
				list, _ := input[k].([]any)
				for i, v := range list {
					s, _ := v.(string)
					if s == "" || i >= maxBulkTargets {
						continue
					}
					if req.Target == "" {
						req.Target = s
					} else {
						req.More = append(req.More, guard.Target{Name: s})
					}
				}
			}
		}
	}
	return req
}

// maxBulkTargets bounds the targets of a bulk check that the guard counts;
// the tools' schemas allow 5, and a longer list is refused by validation.
const maxBulkTargets = 16

// egressTarget is the target an egress run is aimed at: the input's
// "host", or the host of its "url", or its "name" (a DNS name); the guard
// normalises it.
func egressTarget(input map[string]any) string {
	for _, k := range []string{"host", "url", "name"} {
		if v, ok := input[k].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

// Admit asks the guard whether o's caller may run svc with input, and
// records the decision: the abuse row and the metrics of a refused or
// reported decision. A decision reported in report mode lets the run go
// on — except authentication and capability refusals, which are enforced
// in every mode: they are not quotas being rolled out but the protection
// of the probes, whose workers do not know the caller. input may be nil
// for a tool that is not an egress tool (it is admitted before its body
// is read). A refusal is a *Refusal.
func (a *App) Admit(ctx context.Context, o Origin, svc *registry.Service, input map[string]any) (*Admission, error) {
	return a.decide(ctx, o, resolved(ctx, guardRequest(svc, input)))
}

// resolved is req with the addresses of its throttled targets resolved.
func resolved(ctx context.Context, req guard.Request) guard.Request {
	if req.PerTargetPerMinute > 0 && req.Target != "" {
		req.TargetAddr = resolveTarget(ctx, req.Target)
		for i := range req.More {
			req.More[i].Addr = resolveTarget(ctx, req.More[i].Name)
		}
	}
	return req
}

// AdmitJob is Admit for a job of svc: the concurrency slots are the
// job's, not the request's (guard.Request.SlotLease): taken on a lease of
// guard.JobSlotLease and encoded in Admission.Slots, for the job to hold
// from submission to its final state, renewed while it runs and released
// where it ends, by whichever process runs it (RenewSlots, ReleaseSlots:
// the jobs subsystem's SlotKeeper). Release the admission only when no
// job was made.
func (a *App) AdmitJob(ctx context.Context, o Origin, svc *registry.Service, input map[string]any) (*Admission, error) {
	req := guardRequest(svc, input)
	req.SlotLease = guard.JobSlotLease
	return a.decide(ctx, o, resolved(ctx, req))
}

// RenewSlots extends a job's slots (Admission.Slots) to guard.JobSlotLease
// from now: the jobs subsystem's SlotKeeper, from the process running the
// job.
func (a *App) RenewSlots(ctx context.Context, slots string) error {
	ss, err := guard.DecodeSlots(slots)
	if err != nil {
		return err
	}
	_, err = a.guard.RenewSlots(ctx, ss, guard.JobSlotLease)
	return err
}

// ReleaseSlots frees a job's slots (Admission.Slots), from whichever
// process ends the job: the jobs subsystem's SlotKeeper.
func (a *App) ReleaseSlots(ctx context.Context, slots string) error {
	ss, err := guard.DecodeSlots(slots)
	if err != nil {
		return err
	}
	return a.guard.ReleaseSlots(ctx, ss)
}

var _ jobs.SlotKeeper = (*App)(nil)

// targetResolveBudget bounds the lookup of a throttled target's address
// at admission.
const targetResolveBudget = time.Second

// resolveTarget is the address a throttled egress target reaches, for its
// per-target bucket (docs/guard.md, "Admission"): an IP literal as it is,
// a name's first address as the resolver orders them (the one a probe
// dials when it is allowed), the zero Addr when the name does not resolve
// within targetResolveBudget (its name's bucket still counts). The probe
// resolves again when it runs and checks what it dials (docs/egress.md);
// this lookup only keys the throttle.
func resolveTarget(ctx context.Context, target string) netip.Addr {
	host := guard.NormalizeTarget(target)
	if a, err := netip.ParseAddr(host); err == nil {
		return a
	}
	if host == "" || strings.ContainsAny(host, " /") {
		return netip.Addr{}
	}
	ctx, cancel := context.WithTimeout(ctx, targetResolveBudget)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return netip.Addr{}
	}
	return addrs[0].Unmap().WithZone("")
}

// decide is Admit for a guard request.
func (a *App) decide(ctx context.Context, o Origin, req guard.Request) (*Admission, error) {
	d, release := a.guard.Admit(ctx, o.Caller, req)
	hard := d.Reason == guard.ReasonUnauthenticated || d.Reason == guard.ReasonForbidden
	if a.rules.quota(o.Caller.Key, quotaRefusal(d.Reason)) {
		a.record(ctx, abuse.Entry{IP: o.Caller.IP, Principal: o.Caller.Principal, Tool: req.Tool, Reason: RuleQuotaStreak, Reported: d.Allowed, RequestID: o.RequestID})
	}
	m := a.cfg.Metrics
	if d.Reason != "" && (!d.Allowed || hard) {
		release()
		a.record(ctx, abuse.Entry{IP: o.Caller.IP, Principal: o.Caller.Principal, Tool: req.Tool, Reason: string(d.Reason), RequestID: o.RequestID})
		if m != nil {
			m.CountRefusal(string(d.Reason))
			m.CountQuotaDecision(d.Class, d.Column, "refused")
		}
		if hard {
			d.Allowed = false
		}
		return nil, fromGuard(d)
	}
	if d.Reported {
		a.record(ctx, abuse.Entry{IP: o.Caller.IP, Principal: o.Caller.Principal, Tool: req.Tool, Reason: string(d.Reason), Reported: true, RequestID: o.RequestID})
	}
	if m != nil {
		decision := "allowed"
		if d.Reported {
			decision = "reported"
		}
		m.CountQuotaDecision(d.Class, d.Column, decision)
	}
	return &Admission{Limits: d.Limits, Slots: guard.EncodeSlots(d.Slots), release: release, refund: d.Refund}, nil
}

// AdmitBatch admits a seed-000 compute batch (PrepareBatch's items)
// before any item runs (docs/guard.md, "The compute route"): once per
// distinct quota class among the items that will run, with the summed
// cost of that class's items, so that the batch holds one concurrency
// slot per class, not one per item. An item that fails without running
// (an unknown or unavailable tool, stale pins, parameters the tool would
// refuse) costs nothing. A refusal of any class refuses the whole batch;
// the slots of the classes admitted before it are released, their spent
// cost is not refunded. The caller holds a bearer token, so the tools'
// anonymous flag does not apply; their capabilities are checked first,
// whole: a batch naming a tool its token may not run is refused
// (Forbidden, Reason the tool) before any quota is spent. Per-target
// throttles do not apply to batches.
func (a *App) AdmitBatch(ctx context.Context, o Origin, snap *registry.Snapshot, items []executor.Item) (*Admission, error) {
	classes := map[string]*guard.Request{}
	for _, it := range items {
		svc, ok := snap.Service(it.ToolCode)
		if !ok || it.Refusal != nil || !svc.Available() {
			continue
		}
		code := it.ToolCode
		p := svc.Platform()
		if p.Capability != "" && !o.Caller.Has(p.Capability) {
			r := refuse(Forbidden, "The token lacks the capability the tool "+code+" needs; nothing of the batch ran.")
			r.Reason = code
			return nil, r
		}
		class := p.QuotaClass
		req, ok := classes[class]
		if !ok {
			req = &guard.Request{Tool: code, QuotaClass: class, Anonymous: true}
			classes[class] = req
		}
		req.Cost += max(p.Cost, 1)
	}
	var admitted []*Admission
	all := &Admission{}
	for _, class := range slices.Sorted(maps.Keys(classes)) {
		ad, err := a.decide(ctx, o, *classes[class])
		if err != nil {
			for _, x := range admitted {
				x.Release()
			}
			return nil, err
		}
		admitted = append(admitted, ad)
		all.Limits.Policy = append(all.Limits.Policy, ad.Limits.Policy...)
		all.Limits.Limit = append(all.Limits.Limit, ad.Limits.Limit...)
	}
	var once sync.Once
	all.release = func() {
		once.Do(func() {
			for _, x := range admitted {
				x.Release()
			}
		})
	}
	return all, nil
}
