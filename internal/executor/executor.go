package executor

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/toolerr"
)

var (
	// ErrConfig is returned by New when its Config is unusable: an
	// incoherent platform, a negative lane count or no snapshot source.
	ErrConfig = errors.New("executor: invalid configuration")
	// ErrShutdownIncomplete is returned by Shutdown when its wait ends
	// with items still running: their engines have not confirmed cleanup,
	// so their lanes stay held.
	ErrShutdownIncomplete = errors.New("executor: shutdown ended with items still running")
)

// errClosing is the cancellation cause of items cancelled by Shutdown.
var errClosing = errors.New("executor: shutting down")

// DefaultRequestTimeout is the request budget of a batch none of whose
// items resolves, as for the catalogue and diagnostics routes.
const DefaultRequestTimeout = 20 * time.Second

// Config configures an Executor. It is read once by New.
type Config struct {
	// Platform is the platform policy; the zero value means
	// policy.DefaultPlatform().
	Platform policy.Platform
	// Lanes is the number of jobs that run at once; 0 means the
	// platform's WorkerLanes.
	Lanes int
	// Snapshot returns the current registry generation. Each batch reads
	// it once, at admission, and resolves all its items in it.
	Snapshot func() *registry.Snapshot
	// Logger receives quarantine and engine-contract warnings; nil
	// discards them. Nothing submitted or computed is ever logged.
	Logger *slog.Logger
	// AdmissionWaiters bounds the batches that wait for the process's
	// pending items at once ([Batch.Wait]); 0 means
	// DefaultAdmissionWaiters, a negative value lets none wait.
	AdmissionWaiters int
}

// DefaultAdmissionWaiters is how many batches may wait for the process's
// pending items at once: twice the guard's concurrency of one app caller
// (32), so that a burst of that size from two callers is served in order
// rather than refused. A waiting batch costs its caller's goroutine and
// its decoded parameters (at most max_parameter_bytes each).
const DefaultAdmissionWaiters = 64

// Batch is one request for runs as the executor sees it: items admitted
// together, whole or not at all.
type Batch struct {
	Items []Item
	// Deadline is the batch's request deadline; the zero time leaves ctx's
	// alone. Compute treats it as a deadline of ctx: the items' contexts
	// end at it, and when it passes before every item has an outcome
	// Compute returns an error that wraps context.DeadlineExceeded. Given
	// here rather than as a context, a one-item batch run inline needs no
	// context of its own for it.
	Deadline time.Time
	// Wait makes a batch that would take the process past its pending
	// items wait for them, first come first served, instead of being
	// refused at once: until its items' credit is free, the platform's
	// queue budget from its arrival passes (queue_timeout), Deadline
	// passes or ctx ends. At most Config.AdmissionWaiters batches wait;
	// past them a batch is refused with queue_full as without Wait. The
	// surfaces whose callers the guard bounds by tier set it (the run
	// route, jobs, the command line); the seed-000 compute route keeps the
	// spec's immediate refusal.
	Wait bool
	// Settled, when set, is called once for each item of the batch when
	// the executor lets go of it: when the item gave its admission credit
	// back (it ended without a job, or its engine's Run returned), before
	// Compute returns its result — or later, for an item still running
	// when Compute returned at its context's end; for every item of a
	// batch refused whole, before Compute returns. So it is called
	// exactly len(Items) times whatever happens, one call at a time, and
	// last is true for the final call, which comes after every other has
	// returned. It lets a caller hold limits of its own over the work the
	// executor holds for it (the seed-000 per-principal limits, package
	// run). It may run on an item's goroutine and must return promptly.
	Settled func(last bool)
}

// refused tells b's caller that none of its items is held (Settled).
func (b *Batch) refused() {
	if b.Settled != nil {
		for i := range b.Items {
			b.Settled(i == len(b.Items)-1)
		}
	}
}

// Item is one calculation: the caller's identity pins and parameters.
type Item struct {
	CorrelationID         string
	ToolCode              string
	ContractVersion       string
	ImplementationVersion string
	SchemaFingerprint     string
	// Parameters is the canonical JSON of the caller's parameters object.
	Parameters []byte
	// Operation is the parameters' "operation", when the caller decoded
	// them already (the application layer does, once per run); the
	// executor then reads nothing of Parameters but their size. Empty
	// makes the executor decode them to find it.
	Operation string
	// Checked reports that the caller validated the parameters against
	// the input schema of the definition the item pins (the fingerprint
	// covers the schema, so a changed definition is a version_mismatch
	// before anything runs); the engine does not validate them again.
	Checked bool
	// Refusal, when set, is the item's outcome without running: a
	// per-item refusal the caller found while decoding or checking the
	// parameters (invalid_parameters, input_limit_exceeded). The item
	// keeps its place and metrics in the batch.
	Refusal *toolerr.Error
	// InputValidation is how long the caller's check of Parameters took
	// (the application layer validates once per run, then sets Checked or
	// Refusal); nil when it did not check them. It is the item's
	// Metrics.InputValidation when the engine measured none.
	InputValidation *time.Duration
	// Files and OutDir are a job's input files and output folder, handed
	// to the engine as they are (engine.Job).
	Files  []engine.File
	OutDir string
}

// Prompt is implemented by an [Engine] whose Run returns promptly once its
// context ends — an in-process sandbox that is interrupted at its
// context's end and has nothing to clean up beyond it, as the WASM
// engine's instances are. Compute runs a batch of one item of such an
// engine on the caller's goroutine (see the package documentation,
// "Items"): waiting for its Run after the context ended then costs no
// more than the interruption, so the batch still ends with its context.
// An engine whose cleanup can outlast its context (a worker process
// given a grace period) must not implement it.
type Prompt interface {
	Engine
	// ReturnsAtContextEnd marks the engine; it is never called.
	ReturnsAtContextEnd()
}

// Engine runs the items of one package's services in fresh sandboxes:
// what the executor needs of a WASM module (package wasmtool) or a native
// package (package supervisor). engine.Runner is the same method set, as
// the registry holds it.
type Engine interface {
	// Run computes job; see engine.Runner for the contract of the outcome
	// and the error, and of the cleanup it confirms before it returns.
	Run(ctx context.Context, job engine.Job) (*engine.Outcome, error)
}

// Executor admits batches, queues their items for a fixed number of lanes
// and runs each item through its service's engine.Runner with absolute
// deadlines. It is safe for concurrent use. See the package documentation
// for the admission, ticket and cleanup rules.
type Executor struct {
	platform policy.Platform
	lanes    int
	snapshot func() *registry.Snapshot
	log      *slog.Logger
	hooks    hooks

	// stop is cancelled by Shutdown; every item's context ends with it.
	stop    context.Context
	stopAll context.CancelCauseFunc

	mu        sync.Mutex
	closed    bool
	live      int           // item goroutines that have not ended
	drained   chan struct{} // made by Shutdown, closed when live is 0
	free      int           // lanes neither running a job nor quarantined
	active    int           // lanes held by an item
	degraded  int           // lanes quarantined after unconfirmed cleanup
	waiters   list.List     // of *waiter, first come first served
	admitting list.List     // of *admitWaiter, first come first served
	maxAdmit  int           // bound of admitting
	lost      chan struct{} // closed when every lane is quarantined
	pending   int
	completed uint64
	failed    uint64
	reserved  int64
	// inline holds the cancel functions of the running jobs of inline
	// runs, which Shutdown calls: an inline run has no context of its own
	// that Shutdown's could end.
	inline map[*run]context.CancelFunc
}

// admitWaiter is a batch waiting for the process's pending items
// ([Batch.Wait]). Credit freed while batches wait is handed to the first
// that fits (granted, ready closed), so batches are admitted in arrival
// order.
type admitWaiter struct {
	n       int
	ready   chan struct{}
	granted bool // guarded by Executor.mu
}

// hooks let tests stop an item at a chosen point.
type hooks struct {
	// beforeQueue runs in an item's goroutine after its checks, before it
	// waits for a lane.
	beforeQueue func(Item)
}

// New returns an Executor for cfg. It starts no goroutine and no engine:
// work begins with the first Compute.
func New(cfg Config) (*Executor, error) {
	p := cfg.Platform
	if p == (policy.Platform{}) {
		p = policy.DefaultPlatform()
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	lanes := cfg.Lanes
	if lanes == 0 {
		lanes = p.WorkerLanes
	}
	if lanes < 0 {
		return nil, fmt.Errorf("%w: %d lanes", ErrConfig, lanes)
	}
	if cfg.Snapshot == nil {
		return nil, fmt.Errorf("%w: no snapshot source", ErrConfig)
	}
	maxAdmit := cfg.AdmissionWaiters
	switch {
	case maxAdmit == 0:
		maxAdmit = DefaultAdmissionWaiters
	case maxAdmit < 0:
		maxAdmit = 0
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	stop, stopAll := context.WithCancelCause(context.Background())
	return &Executor{
		platform: p,
		lanes:    lanes,
		snapshot: cfg.Snapshot,
		log:      log,
		stop:     stop,
		stopAll:  stopAll,
		free:     lanes,
		maxAdmit: maxAdmit,
		lost:     make(chan struct{}),
		inline:   make(map[*run]context.CancelFunc),
	}, nil
}

// Pool returns the pool's counters. It is safe to call at any time.
func (e *Executor) Pool() PoolSnapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	return PoolSnapshot{
		Available: e.availableLocked(),
		Lanes:     e.lanes,
		Active:    e.active,
		Degraded:  e.degraded,
		Queued:    e.waiters.Len(),
		Pending:   e.pending,
		Waiting:   e.admitting.Len(),
		Completed: e.completed,
		Failed:    e.failed,
		Resources: PoolResources{
			MemoryCapacityBytes: int64(e.lanes) * e.platform.MemoryLimitBytes,
			MemoryReservedBytes: e.reserved,
		},
	}
}

func (e *Executor) availableLocked() bool { return !e.closed && e.degraded < e.lanes }

// Shutdown closes admission (every later batch is refused with
// service_unavailable), cancels every item, queued or running, and waits
// until every item has ended or ctx ends, and at most the platform's
// cleanup budget. It returns ErrShutdownIncomplete when items remain:
// their engines have not confirmed cleanup, so their lanes stay held and
// their credit is released only when Run returns. It is safe to call more
// than once; each call waits again.
func (e *Executor) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	if e.drained == nil {
		e.drained = make(chan struct{})
		if e.live == 0 {
			close(e.drained)
		}
	}
	drained := e.drained
	// Stop first: an inline job cancelled below gives its lane to a queued
	// item, which must then find the executor stopped (halted), not start
	// a job of its own.
	e.stopAll(errClosing)
	for _, cancel := range e.inline {
		cancel()
	}
	e.mu.Unlock()

	budget := time.NewTimer(time.Duration(e.platform.CleanupTimeoutMS) * time.Millisecond)
	defer budget.Stop()
	select {
	case <-drained:
		return nil
	case <-ctx.Done():
	case <-budget.C:
	}
	select {
	case <-drained:
		return nil
	default:
	}
	p := e.Pool()
	e.log.Warn("executor shutdown incomplete", "active", p.Active, "pending", p.Pending)
	return fmt.Errorf("%w: %d items pending", ErrShutdownIncomplete, p.Pending)
}

// BatchRequestTimeout returns the request budget of a batch of items: the
// largest effective request_timeout_ms among the items that resolve in
// the current snapshot (a published service and a declared operation in
// the parameters), or DefaultRequestTimeout, capped at the platform's
// request timeout, when none resolves.
func (e *Executor) BatchRequestTimeout(items []Item) time.Duration {
	var best int64
	if snap := e.snapshot(); snap != nil {
		for _, it := range items {
			svc, terr := lookup(snap, it.ToolCode)
			if terr != nil {
				continue
			}
			eff, terr := e.operation(svc, it)
			if terr != nil {
				continue
			}
			best = max(best, eff.RequestTimeoutMS)
		}
	}
	if best == 0 {
		return min(DefaultRequestTimeout, time.Duration(e.platform.RequestTimeoutMS)*time.Millisecond)
	}
	return time.Duration(best) * time.Millisecond
}

// run is one admitted batch.
type run struct {
	ctx      context.Context // the batch's context, also ended by Shutdown (inline: the caller's)
	cancel   context.CancelCauseFunc
	stop     func() bool // unregisters the Shutdown hook
	snap     *registry.Snapshot
	settled  func(last bool) // Batch.Settled
	admitted time.Time
	// arrived is when Compute was called: admitted, or earlier when the
	// batch waited for its credit; its items' queue budget runs from it.
	arrived time.Time
	// deadline is the batch's request deadline for an inline run (zero:
	// none), which is not in its context; a batch run on goroutines has
	// it in ctx.
	deadline time.Time
	inline   bool
	items    []Item
	results  []ItemResult
	done     chan struct{} // closed when every item has an outcome; nil inline

	// mu serializes the items' settling (settleItem), and so the calls of
	// settled.
	mu        sync.Mutex
	remaining int // items not yet settled
}

// Compute runs one batch and returns its results in submission order.
//
// A batch-level refusal is a *toolerr.Error: service_unavailable when the
// executor is shutting down, every lane is quarantined or no registry
// snapshot is published; queue_full (retryable) when the batch is empty
// or would exceed the process's pending items. A refused batch runs
// nothing.
//
// When ctx ends (or b.Deadline passes) before every item has an outcome,
// Compute returns ctx's error at once, wrapped. Its items are cancelled
// and end in the background; each keeps its admission credit (and is
// not yet Settled) until its engine's Run has returned. A batch of one
// item of a [Prompt] engine runs on the caller's goroutine, whose Run
// then returns at once too.
func (e *Executor) Compute(ctx context.Context, b Batch) (*BatchResult, error) {
	if err := ctx.Err(); err != nil {
		b.refused()
		return nil, fmt.Errorf("computing batch: %w", err)
	}
	if len(b.Items) == 1 && e.prompt(b.Items[0]) {
		return e.computeInline(ctx, b)
	}
	if !b.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, b.Deadline)
		defer cancel()
	}
	r, err := e.admit(ctx, b, false)
	if err != nil {
		b.refused()
		return nil, err
	}
	for i := range r.items {
		go e.item(r, i)
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		select {
		case <-r.done:
		default:
			return nil, fmt.Errorf("computing batch: %w", ctx.Err())
		}
	}
	return &BatchResult{Results: r.results}, nil
}

// prompt reports whether it names a published service whose engine is
// [Prompt].
func (e *Executor) prompt(it Item) bool {
	snap := e.snapshot()
	if snap == nil {
		return false
	}
	svc, ok := snap.Service(it.ToolCode)
	if !ok {
		return false
	}
	_, ok = svc.Runner.(Prompt)
	return ok
}

// computeInline runs a batch of one item on the caller's goroutine: no
// item goroutine, no context for the batch (ctx and b.Deadline bound the
// queue wait, Shutdown is watched through e.stop) and one context for the
// job, which ends at the earlier of its hard deadline and b.Deadline, with
// ctx, or with Shutdown. Admission, credit, lanes and outcomes are those
// of every batch. The item's outcome is returned unless ctx ended or the
// deadline passed before it came, as Compute would have returned then.
func (e *Executor) computeInline(ctx context.Context, b Batch) (*BatchResult, error) {
	r, err := e.admit(ctx, b, true)
	if err != nil {
		b.refused()
		return nil, err
	}
	e.item(r, 0)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("computing batch: %w", err)
	}
	if r.expired() {
		return nil, fmt.Errorf("computing batch: %w", context.DeadlineExceeded)
	}
	return &BatchResult{Results: r.results}, nil
}

// expired reports whether an inline run's request deadline has passed.
func (r *run) expired() bool {
	return r.inline && !r.deadline.IsZero() && !time.Now().Before(r.deadline)
}

// admit decides the whole batch at once and, when it is accepted, takes
// its credit, the process's pending items; a batch with Wait may first
// wait for it (awaitCredit). An inline run gets no context of its own and keeps the
// caller's items: they do not outlive Compute.
func (e *Executor) admit(ctx context.Context, b Batch, inline bool) (*run, error) {
	arrived := time.Now()
	snap := e.snapshot()
	n := len(b.Items)
	e.mu.Lock()
	switch {
	case !e.availableLocked() || snap == nil:
		e.mu.Unlock()
		return nil, toolerr.New(toolerr.ServiceUnavailable)
	case n == 0:
		e.mu.Unlock()
		return nil, toolerr.New(toolerr.QueueFull)
	}
	if e.pending+n <= e.platform.MaxPendingItemsPerProcess && (!b.Wait || e.admitting.Len() == 0) {
		e.creditLocked(n)
		e.mu.Unlock()
	} else {
		if !b.Wait || e.admitting.Len() >= e.maxAdmit || n > e.platform.MaxPendingItemsPerProcess {
			e.mu.Unlock()
			return nil, toolerr.New(toolerr.QueueFull)
		}
		w := &admitWaiter{n: n, ready: make(chan struct{})}
		el := e.admitting.PushBack(w)
		e.mu.Unlock()
		if err := e.awaitCredit(ctx, b, w, el, arrived); err != nil {
			return nil, err
		}
	}

	r := &run{
		snap:     snap,
		settled:  b.Settled,
		admitted: time.Now(),
		arrived:  arrived,
		results:  make([]ItemResult, n),
	}
	r.remaining = n
	if inline {
		r.ctx, r.inline, r.deadline, r.items = ctx, true, b.Deadline, b.Items
		return r, nil
	}
	rctx, cancel := context.WithCancelCause(ctx)
	r.ctx, r.cancel, r.items, r.done = rctx, cancel, cloneItems(b.Items), make(chan struct{})
	r.stop = context.AfterFunc(e.stop, func() { cancel(errClosing) })
	return r, nil
}

// creditLocked takes the credit of a batch of n items that fits the
// process's pending items. e.mu is held.
func (e *Executor) creditLocked(n int) {
	e.pending += n
	e.live += n
}

// awaitCredit waits for w's credit (see [Batch.Wait]): nil once it was
// granted, else queue_timeout when the platform's queue budget from
// arrived passed first, service_unavailable at Shutdown or when every
// lane is quarantined, or an error wrapping ctx's end or the request
// deadline's.
// Credit granted as the wait ended is kept, as a lane is in acquire: the
// run then notices the end itself.
func (e *Executor) awaitCredit(ctx context.Context, b Batch, w *admitWaiter, el *list.Element, arrived time.Time) error {
	deadline := arrived.Add(time.Duration(e.platform.QueueTimeoutMS) * time.Millisecond)
	request := !b.Deadline.IsZero() && b.Deadline.Before(deadline)
	if request {
		deadline = b.Deadline
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	var err error
	select {
	case <-w.ready:
	case <-timer.C:
		err = toolerr.New(toolerr.QueueTimeout)
		if request {
			err = fmt.Errorf("computing batch: %w", context.DeadlineExceeded)
		}
	case <-ctx.Done():
		err = fmt.Errorf("computing batch: %w", ctx.Err())
	case <-e.stop.Done():
		err = toolerr.New(toolerr.ServiceUnavailable)
	case <-e.lost:
		err = toolerr.New(toolerr.ServiceUnavailable)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if w.granted {
		return nil
	}
	e.admitting.Remove(el)
	e.grantLocked() // the batches behind w may fit where w did not
	return err
}

// grantLocked hands the process's free pending items to the waiting
// batches that fit, in arrival order, stopping at the first that does
// not. e.mu is held.
func (e *Executor) grantLocked() {
	if !e.availableLocked() {
		return // the waiters are told by Shutdown or the last quarantine
	}
	for f := e.admitting.Front(); f != nil; f = e.admitting.Front() {
		w := f.Value.(*admitWaiter)
		if e.pending+w.n > e.platform.MaxPendingItemsPerProcess {
			return
		}
		e.admitting.Remove(f)
		w.granted = true
		e.creditLocked(w.n)
		close(w.ready)
	}
}

// cloneItems copies items and their parameters: items may outlive
// Compute, and the caller keeps its batch.
func cloneItems(items []Item) []Item {
	out := slices.Clone(items)
	for i := range out {
		out[i].Parameters = bytes.Clone(out[i].Parameters)
	}
	return out
}

// item is the goroutine of item i (an inline run calls it on the caller's
// goroutine). Its ticket is settled exactly once, here, after runItem has
// returned: runItem returns only once the item no longer owns a job (none
// was started, or its engine's Run returned). The batch's caller is told
// (Batch.Settled) before the batch's outcome is ready.
func (e *Executor) item(r *run, i int) {
	res := e.runItem(r, r.items[i])
	r.results[i] = res
	e.settle(res.Succeeded)
	if r.settleItem() && !r.inline {
		r.stop()
		r.cancel(nil)
		close(r.done)
	}
	e.mu.Lock()
	e.live--
	if e.live == 0 && e.drained != nil {
		close(e.drained) // once: after Shutdown no item is admitted
	}
	e.mu.Unlock()
}

// settleItem counts one of r's items settled and tells the batch's caller
// (Batch.Settled). It reports whether the item was the batch's last.
func (r *run) settleItem() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.remaining--
	last := r.remaining == 0
	if r.settled != nil {
		r.settled(last)
	}
	return last
}

// settle releases one item's admission credit and counts its terminal
// state.
func (e *Executor) settle(success bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.pending--
	e.completed++
	if !success {
		e.failed++
	}
	if e.admitting.Len() > 0 {
		e.grantLocked()
	}
}
