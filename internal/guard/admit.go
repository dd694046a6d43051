package guard

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Request is what Admit needs to know of a run, taken from the tool's
// descriptor and its parameters.
type Request struct {
	// Tool is the tool id, for the Challenge hook and the abuse log.
	Tool string
	// QuotaClass is the descriptor's quotaClass; the table's default class
	// when empty or unknown.
	QuotaClass string
	// Cost is the descriptor's cost in units; values below 1 count as 1.
	Cost int
	// Anonymous is the descriptor's auth.anonymous: false means at least a
	// session is needed.
	Anonymous bool
	// Capability the caller must hold, such as tools.net.probe; empty for
	// none.
	Capability string
	// Egress marks a tool that sends traffic to a caller-chosen target.
	Egress bool
	// Target is the host (or URL, or host:port) an egress run is aimed at.
	Target string
	// TargetAddr is the address Target resolves to (the one a probe
	// dials), when the caller resolved it; the zero Addr when unknown.
	// An IP literal Target is its own address.
	TargetAddr netip.Addr
	// PerTargetPerMinute is the descriptor's limits.perTargetPerMinute:
	// runs per minute against one target, across all callers and every
	// egress tool; 0 for none. Two buckets count a run: one keyed by the
	// normalised Target (the name typed) and one by its address (Target
	// itself when it is an IP literal, else TargetAddr), so that a name
	// and its address, or two names of one address, share the limit. A
	// bucket takes the limit of the run being admitted.
	PerTargetPerMinute int
	// More are the further targets of a bulk run (tls_check_bulk,
	// http_headers_bulk): each counts against its own per-target buckets
	// as Target does, and the run is throttled when any one is.
	More []Target
	// SlotLease, when not zero, makes the concurrency slots the job's
	// rather than this process's: each is taken on a lease of this length
	// under a holder id of its own and listed in Decision.Slots, renewed
	// by whoever runs the job (RenewSlots) and released where it ends
	// (ReleaseSlots), from any process. The release function Admit
	// returns still frees them, for a job that was never made.
	SlotLease time.Duration
}

// JobSlotLease is the lease of a job's concurrency slots (Request.SlotLease):
// the longest a slot outlives the last renewal of the job that holds it —
// a replica that died, a partition, a final state nobody recorded.
const JobSlotLease = 2 * time.Minute

// Slot is one concurrency slot a job holds: the semaphore's key and the
// holder id. Its JSON form is what a job stores (EncodeSlots).
type Slot struct {
	Key    string `json:"key"`
	Holder string `json:"holder"`
}

// EncodeSlots is the form a job stores its slots in: a JSON array; "" for
// none.
func EncodeSlots(slots []Slot) string {
	if len(slots) == 0 {
		return ""
	}
	b, _ := json.Marshal(slots) // strings only: it cannot fail
	return string(b)
}

// DecodeSlots reads what EncodeSlots wrote; "" is none.
func DecodeSlots(s string) ([]Slot, error) {
	if s == "" {
		return nil, nil
	}
	var slots []Slot
	if err := json.Unmarshal([]byte(s), &slots); err != nil {
		return nil, fmt.Errorf("guard: decoding a job's slots: %w", err)
	}
	return slots, nil
}

// Target is one further target of a bulk run: the name typed and, when
// resolved, its address.
type Target struct {
	Name string
	Addr netip.Addr
}

// Reason is a stable refusal code.
type Reason string

// The refusal reasons. Which answer each becomes is the routes' business
// (one mapper per answer dialect); the guard says only whether waiting
// helps (Retryable).
const (
	// ReasonUnauthenticated: the tool is not anonymous and the caller is.
	ReasonUnauthenticated Reason = "unauthenticated"
	// ReasonForbidden: the caller lacks the tool's capability.
	ReasonForbidden Reason = "forbidden"
	// ReasonChallenge: the challenge hook refused.
	ReasonChallenge Reason = "challenge_failed"
	// ReasonCostExceedsAllowance: the cost is larger than the tier's
	// burst, so waiting would never help.
	ReasonCostExceedsAllowance Reason = "cost_exceeds_allowance"
	// ReasonConcurrency: too many runs of the class in flight for the
	// caller or the tier; retry after RetryAfterSeconds.
	ReasonConcurrency Reason = "concurrency"
	// ReasonQuotaExceeded: the caller's bucket is short; retry after
	// RetryAfterSeconds.
	ReasonQuotaExceeded Reason = "quota_exceeded"
	// ReasonThrottled: the target's per-minute throttle is spent, across
	// all callers; retry after RetryAfterSeconds.
	ReasonThrottled Reason = "throttled"
	// ReasonUnavailable: the shared store of the quotas, throttles or
	// semaphores (Redis) did not answer, so the run could not be counted;
	// retry after RetryAfterSeconds. Not the caller's doing.
	ReasonUnavailable Reason = "guard_unavailable"
)

// Retryable reports whether waiting can turn the refusal into an
// admission: true for concurrency, quota_exceeded, throttled and
// guard_unavailable, whose decisions carry a RetryAfterSeconds.
func (r Reason) Retryable() bool {
	return r == ReasonConcurrency || r == ReasonQuotaExceeded || r == ReasonThrottled || r == ReasonUnavailable
}

// Decision is the outcome of Admit.
type Decision struct {
	// Allowed reports whether the run may proceed. In report mode it is
	// true even when Reason is set.
	Allowed bool
	// Reported is true in report mode when enforcement would have refused;
	// the caller logs it.
	Reported bool
	// Reason is the (would-be) refusal; empty when admitted cleanly.
	Reason Reason
	// RetryAfterSeconds is how long to wait before a retry can succeed,
	// rounded up, for a retryable (would-be) refusal; 0 otherwise.
	RetryAfterSeconds int
	// Class and Column locate the allowance applied: the quota class and
	// the tier name (or "sandbox").
	Class, Column string
	// Limits are the rate-limit fields of the quotas and throttles
	// consulted, whatever the decision.
	Limits RateLimits
	// Slots are the leased slots an allowed decision took, for a request
	// with a SlotLease; nil otherwise.
	Slots []Slot
	// refund gives back the units an allowed run spent (Refund).
	refund func()
}

// Refund gives back the quota and throttle units an allowed decision
// spent, for a run refused before its tool ran (a refusal before the tool
// runs costs nothing). The concurrency slots are not touched: they are
// the release function's. It is safe to call more than once, and on a
// refused decision (which spent nothing).
func (d Decision) Refund() {
	if d.refund != nil {
		d.refund()
	}
}

// RateLimits are the values of the RateLimit-Policy and RateLimit fields
// (IETF httpapi ratelimit-headers draft) of a decision: one item per quota
// or throttle consulted, in order. The routes send them on the answer.
type RateLimits struct {
	Policy []string
	Limit  []string
}

// Err returns a *Refusal for a refused decision, nil otherwise (including
// reported decisions).
func (d Decision) Err() error {
	if d.Allowed {
		return nil
	}
	return &Refusal{Reason: d.Reason, RetryAfterSeconds: d.RetryAfterSeconds, Limits: d.Limits}
}

// Refusal is the error form of a refused Decision.
type Refusal struct {
	Reason            Reason
	RetryAfterSeconds int
	Limits            RateLimits
}

// Error returns "guard: refused: " and the reason.
func (e *Refusal) Error() string { return "guard: refused: " + string(e.Reason) }

// Admit decides whether c may run req, acquiring its concurrency slots and
// spending its cost. The returned release frees the slots when the run
// ends; it is never nil, and calling it more than once is safe. On a
// refusal in enforce mode nothing stays acquired (release is a no-op). In
// report mode the run is let through and Decision.Reported says what would
// have been refused. Admit is safe for concurrent use.
func (g *Guard) Admit(ctx context.Context, c Caller, req Request) (Decision, func()) {
	now := g.cfg.Now()
	cost := max(req.Cost, 1)
	a, column, _ := g.cfg.Quotas.Lookup(req.QuotaClass, c)
	class := req.QuotaClass
	if _, ok := g.cfg.Quotas.Classes[class]; !ok {
		class = g.cfg.Quotas.DefaultClass
	}
	ad := &admission{d: Decision{Class: class, Column: column}, enforce: g.cfg.Mode == Enforce}
	// A quota and a throttle give at most two fields of each kind: their
	// slices start in the admission's own array (one allocation less
	// each; an append past two would move them to the heap).
	ad.d.Limits.Policy, ad.d.Limits.Limit = ad.fields[0:0:2], ad.fields[2:2:4]

	if err := g.cfg.Challenge.Check(ctx, c, req); err != nil {
		if ad.refuse(ReasonChallenge, 0) {
			return ad.done()
		}
	}
	if !req.Anonymous && c.Tier == Anonymous {
		if ad.refuse(ReasonUnauthenticated, 0) {
			return ad.done()
		}
	}
	if req.Capability != "" && !c.Has(req.Capability) {
		if ad.refuse(ReasonForbidden, 0) {
			return ad.done()
		}
	}
	fits := cost <= a.Burst
	if fits {
		ad.d.Limits.Policy = append(ad.d.Limits.Policy, policy(class, a, UnitCost))
	} else if ad.refuse(ReasonCostExceedsAllowance, 0) {
		return ad.done()
	}

	// Concurrency: per caller, then per tier.
	ad.lease = req.SlotLease
	if a.ConcurrentPerCaller > 0 {
		if ad.acquire(ctx, g.cfg.Semaphores, class+"\x00"+column+"\x00"+c.Key, a.ConcurrentPerCaller) {
			return ad.done()
		}
	}
	if a.ConcurrentPerTier > 0 {
		if ad.acquire(ctx, g.cfg.Semaphores, class+"\x00"+column, a.ConcurrentPerTier) {
			return ad.done()
		}
	}

	// Quota.
	if fits {
		t, err := g.cfg.Limiter.Take(ctx, "q\x00"+class+"\x00"+column+"\x00"+c.Key, a, cost, now)
		switch {
		case err != nil:
			// A limiter that cannot answer (a shared store down): closed
			// in enforce mode, open and reported in report mode. The
			// caller sees no quota item.
			if ad.refuse(ReasonUnavailable, time.Second) {
				return ad.done()
			}
		case t.OK:
			ad.taken = append(ad.taken, t.Undo)
			ad.d.Limits.Limit = append(ad.d.Limits.Limit, limitField(class, t.Remaining, t.Reset))
		default:
			ad.d.Limits.Limit = append(ad.d.Limits.Limit, refusedField(class, t.RetryAfter))
			if ad.refuse(ReasonQuotaExceeded, t.RetryAfter) {
				return ad.done()
			}
		}
	}

	// Per-target throttle, across all callers and egress tools: by the
	// name typed, then by the address it reaches. The answer shows the
	// tighter of the two buckets as "target".
	if req.PerTargetPerMinute > 0 && req.Target != "" {
		ta := Allowance{Burst: req.PerTargetPerMinute, PerMinute: req.PerTargetPerMinute}
		ad.d.Limits.Policy = append(ad.d.Limits.Policy, policy("target", ta, UnitRequest))
		var keys []string
		for _, tg := range append([]Target{{Name: req.Target, Addr: req.TargetAddr}}, req.More...) {
			for _, k := range targetKeys(tg.Name, tg.Addr) {
				if k != "" && !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
		field, refused := "", false
		least := math.MaxInt
		for _, k := range keys {
			t, err := g.cfg.Limiter.Take(ctx, k, ta, 1, now)
			switch {
			case err != nil:
				if ad.refuse(ReasonUnavailable, time.Second) {
					return ad.done()
				}
			case t.OK:
				ad.taken = append(ad.taken, t.Undo)
				if t.Remaining < least {
					least, field = t.Remaining, limitField("target", t.Remaining, t.Reset)
				}
			default:
				field, refused = refusedField("target", t.RetryAfter), true
				if ad.refuse(ReasonThrottled, t.RetryAfter) {
					ad.d.Limits.Limit = append(ad.d.Limits.Limit, field)
					return ad.done()
				}
			}
			if refused {
				break
			}
		}
		if field != "" {
			ad.d.Limits.Limit = append(ad.d.Limits.Limit, field)
		}
	}
	return ad.done()
}

// admission accumulates one Admit call.
type admission struct {
	d       Decision
	fields  [4]string // the backing array of d.Limits
	enforce bool
	undo    []func() // semaphore releases
	taken   []func() // bucket undos
	lease   time.Duration
	holder  string // the job's slots' holder id, with a lease
}

// acquire takes a slot of key, recording a concurrency refusal when none
// is free and an unavailable one when the semaphores cannot answer. It
// reports whether Admit must stop now, as refuse does. With a lease, the
// slot is a job's (Request.SlotLease) and is listed in the decision.
func (ad *admission) acquire(ctx context.Context, s Semaphores, key string, limit int) bool {
	var (
		rel func()
		ok  bool
		err error
	)
	if ad.lease > 0 {
		// One holder id for the caller's slot and the tier's: the tier's
		// can be traced to the job, and to the caller, from either.
		if ad.holder == "" {
			ad.holder = newHolderID()
		}
		slot := Slot{Key: key, Holder: ad.holder}
		if ok, err = s.AcquireLease(ctx, key, slot.Holder, limit, ad.lease); ok {
			ad.d.Slots = append(ad.d.Slots, slot)
			rel = func() { _ = s.ReleaseLease(context.WithoutCancel(ctx), slot.Key, slot.Holder) }
		}
	} else {
		rel, ok, err = s.Acquire(ctx, key, limit)
	}
	switch {
	case err != nil:
		return ad.refuse(ReasonUnavailable, time.Second)
	case !ok:
		// The answer says which bound refused it: the slots in flight
		// (the draft's "concurrent-requests" unit), none left, and
		// the second the Retry-After names.
		ad.d.Limits.Policy = append(ad.d.Limits.Policy, concurrencyPolicy(limit))
		ad.d.Limits.Limit = append(ad.d.Limits.Limit, refusedField("concurrency", time.Second))
		return ad.refuse(ReasonConcurrency, time.Second)
	}
	ad.undo = append(ad.undo, rel)
	return false
}

// refuse records a refusal. It reports whether Admit must stop now
// (enforce mode); in report mode only the first reason is kept.
func (ad *admission) refuse(r Reason, retry time.Duration) bool {
	if ad.d.Reason == "" {
		ad.d.Reason = r
		if r.Retryable() {
			ad.d.RetryAfterSeconds = retrySeconds(retry)
		}
	}
	return ad.enforce
}

func (ad *admission) done() (Decision, func()) {
	if ad.d.Reason == "" {
		ad.d.Allowed = true
	} else if !ad.enforce {
		ad.d.Allowed, ad.d.Reported = true, true
	}
	if !ad.d.Allowed {
		for _, u := range ad.taken {
			u()
		}
		for _, u := range ad.undo {
			u()
		}
		ad.d.Slots = nil
		return ad.d, func() {}
	}
	var refundOnce sync.Once
	taken := ad.taken
	ad.d.refund = func() {
		refundOnce.Do(func() {
			for _, u := range taken {
				u()
			}
		})
	}
	var once sync.Once
	undo := ad.undo
	return ad.d, func() {
		once.Do(func() {
			for _, u := range undo {
				u()
			}
		})
	}
}

// RenewSlots extends a job's slots (Decision.Slots) to lease from now. It
// reports how many were still held; a lapsed slot is not taken again.
// Renewing is the business of the process running the job.
func (g *Guard) RenewSlots(ctx context.Context, slots []Slot, lease time.Duration) (int, error) {
	n := 0
	for _, sl := range slots {
		ok, err := g.cfg.Semaphores.RenewLease(ctx, sl.Key, sl.Holder, lease)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// ReleaseSlots frees a job's slots, from any process; releasing slots no
// longer held is no error, so it is safe to call more than once.
func (g *Guard) ReleaseSlots(ctx context.Context, slots []Slot) error {
	var first error
	for _, sl := range slots {
		if err := g.cfg.Semaphores.ReleaseLease(ctx, sl.Key, sl.Holder); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// retrySeconds rounds up to whole seconds, at least 1.
func retrySeconds(d time.Duration) int {
	if d <= 0 {
		return 1
	}
	s := math.Ceil(d.Seconds())
	if s > math.MaxInt32 {
		return math.MaxInt32
	}
	return max(int(s), 1)
}

// The quota units of the RateLimit-Policy items (the draft's qu
// parameter, whose default is "request"): a quota class counts each run's
// cost, so its numbers are cost units, not requests; a per-target
// throttle counts runs, one a request.
const (
	UnitCost       = "cost-units"
	UnitRequest    = "request"
	UnitConcurrent = "concurrent-requests"
)

// concurrencyPolicy is the RateLimit-Policy item of a concurrency bound
// that refused a run: limit runs in flight at once, no window.
func concurrencyPolicy(limit int) string {
	b := strconv.AppendQuote(nil, "concurrency")
	b = append(b, ";q="...)
	b = strconv.AppendInt(b, int64(limit), 10)
	b = append(b, ";qu="...)
	b = strconv.AppendQuote(b, UnitConcurrent)
	return string(b)
}

// policy is a RateLimit-Policy item: the quota q in units qu and the
// window w in seconds it takes to refill it.
func policy(name string, a Allowance, unit string) string {
	w := 60
	if a.PerMinute > 0 {
		w = int(math.Ceil(float64(a.Burst) * 60 / float64(a.PerMinute)))
	}
	return rateItem(name, ";q=", a.Burst, ";w=", w, unit)
}

// refusedField is the RateLimit item of the bucket that refused a run:
// nothing usable remains for it (r=0) and t is the Retry-After the answer
// carries (the seconds until the run's cost is back, rounded up, at least
// 1), so that the two fields agree (the draft's §6 on Retry-After).
func refusedField(name string, retry time.Duration) string {
	return rateItem(name, ";r=", 0, ";t=", retrySeconds(retry), "")
}

// limitField is a RateLimit item: r units remaining, t seconds until the
// bucket is full.
func limitField(name string, remaining int, reset time.Duration) string {
	t := 0
	if reset > 0 {
		t = int(math.Ceil(reset.Seconds()))
	}
	return rateItem(name, ";r=", remaining, ";t=", t, "")
}

// rateItem is `"name"` k1 v1 k2 v2, and `;qu="unit"` when unit is not
// empty, as fmt's "%q%s%d%s%d;qu=%q" would write it, in one allocation: it
// is on the path of every admitted run.
func rateItem(name, k1 string, v1 int, k2 string, v2 int, unit string) string {
	b := make([]byte, 0, len(name)+len(k1)+len(k2)+len(unit)+32)
	b = strconv.AppendQuote(b, name)
	b = append(b, k1...)
	b = strconv.AppendInt(b, int64(v1), 10)
	b = append(b, k2...)
	b = strconv.AppendInt(b, int64(v2), 10)
	if unit != "" {
		b = append(b, ";qu="...)
		b = strconv.AppendQuote(b, unit)
	}
	return string(b)
}

// targetKeys are the per-target buckets of req: its name's and its
// address's ("" for one that is the same bucket or unknown).
func targetKeys(target string, addr netip.Addr) [2]string {
	name := NormalizeTarget(target)
	if a, err := netip.ParseAddr(name); err == nil {
		addr = a
	}
	var keys [2]string
	if addr.IsValid() {
		keys[1] = "t\x00a\x00" + addr.Unmap().WithZone("").String()
	}
	if keys[1] == "" || addr.Unmap().WithZone("").String() != name {
		keys[0] = "t\x00n\x00" + name
	}
	return keys
}

// NormalizeTarget reduces an egress target to the host its throttle is
// keyed by: the host of a URL or host:port, lower-case, without a trailing
// dot or brackets; an IP address in canonical form (IPv4-mapped as IPv4).
func NormalizeTarget(s string) string {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "://") {
		if u, err := url.Parse(s); err == nil {
			s = u.Hostname()
		}
	}
	if a := parseAddr(s); a.IsValid() {
		return a.String()
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 && !strings.Contains(s[:i], ":") {
		s = s[:i]
	}
	s = strings.ToLower(strings.TrimSuffix(strings.Trim(s, "[]"), "."))
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().String()
	}
	return s
}

// InFlight returns the runs of class held by the semaphores: for the
// caller key when key is not empty, else tier-wide for column. For tests
// and metrics. A semaphore that cannot answer (a shared store down)
// counts 0.
func (g *Guard) InFlight(class, column, key string) int {
	k := class + "\x00" + column
	if key != "" {
		k += "\x00" + key
	}
	n, err := g.cfg.Semaphores.Held(context.Background(), k)
	if err != nil {
		return 0
	}
	return n
}
