package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Registry discovers the tools folder and the builtins, and publishes each
// discovery as an immutable [Snapshot]. It is safe for concurrent use.
// Close stops the live folder and releases the modules.
type Registry struct {
	cfg      Config
	log      *slog.Logger
	builtins []*pkg // decoded once, at Open

	current atomic.Pointer[Snapshot]

	// mu serialises discoveries and guards the fields below.
	mu         sync.Mutex
	generation uint64
	entries    map[string]*entry       // by file name: the settled, loaded files
	seen       map[string]*observation // by file name: the last stat, for the settle rule
	dirty      bool                    // entries differ from the published snapshot
	retiring   []*module               // replaced or removed, retired once the next snapshot is out
	closed     bool
	loading    map[string]*loadJob // by file name: the load running for its current stamp
	// starting holds the files whose loads the first discovery left
	// running; started is closed once none is left and the snapshot with
	// their outcomes is published (Started).
	starting   map[string]bool
	startTotal int // len(starting) when Open returned
	started    chan struct{}
	isStarted  bool
	waiters    int               // discoveries waiting for loads; loads that end meanwhile leave publishing to them
	warned     map[string]string // by file name: the last warning logged, so that it is logged once

	// scanFound and scanLeft are the module files the first scan found
	// and those of them whose loads have not ended (FirstScan); atomic,
	// so that a probe never waits for a discovery holding mu.
	scanFound, scanLeft atomic.Int32

	// loadCtx ends the loads when the registry closes; jobs counts the
	// load goroutines; slots bounds the loads holding file bytes; kick
	// tells the watcher a load found its file still changing.
	loadCtx  context.Context
	loadStop context.CancelFunc
	jobs     sync.WaitGroup
	slots    chan struct{}
	kick     chan struct{}
	// progress lists the load jobs running and the work they abandoned
	// (Loading); it has its own lock.
	progress loads
	// moved holds the files the watcher saw moved in (movedin.go); it has
	// its own lock.
	moved movedIn
	// promotions counts the promotions running (promote.go).
	promotions atomic.Int32

	// open counts modules whose Tool is not closed yet; drained is closed
	// when it reaches zero (created by a Close waiting for it).
	modMu   sync.Mutex
	open    int
	drained chan struct{}

	stop context.CancelFunc // stops the watcher
	done chan struct{}      // closed when the watcher has returned
}

// Open runs the first discovery, publishes it as generation 1 and, unless
// cfg.Static, starts watching the tools folder. Files still being written
// are waited for (up to ten settle periods), and loads for up to
// cfg.LoadWait, so that generation 1 holds them; each load ends by its
// phase deadlines (wasmtool.Config), and one still running after
// LoadWait is published when it ends. A tools folder that cannot be read
// is an error; failed modules are not: they are reported in the
// snapshot's failures. ctx bounds the first discovery only.
func Open(ctx context.Context, cfg Config) (*Registry, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Dir != "" {
		fi, err := os.Stat(cfg.Dir)
		if err != nil {
			return nil, fmt.Errorf("opening the tools folder: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("opening the tools folder: %s is not a directory", cfg.Dir)
		}
	}
	r := &Registry{
		cfg:     cfg,
		log:     cfg.Logger,
		entries: map[string]*entry{},
		seen:    map[string]*observation{},
		dirty:   true, // generation 1 is published whatever the folder holds
		loading: map[string]*loadJob{},
		warned:  map[string]string{},
		slots:   make(chan struct{}, runtime.GOMAXPROCS(0)),
		kick:    make(chan struct{}, 1),
		started: make(chan struct{}),
	}
	r.loadCtx, r.loadStop = context.WithCancel(context.Background())
	for _, b := range cfg.Builtins {
		r.builtins = append(r.builtins, builtinPkg(b, cfg.Platform, r.log))
	}
	if _, err := r.discover(ctx, true, false); err != nil {
		return nil, errors.Join(err, r.Close(context.Background()))
	}
	r.mu.Lock()
	r.starting = make(map[string]bool, len(r.loading))
	for name := range r.loading {
		r.starting[name] = true
	}
	r.startTotal = len(r.starting)
	r.scanFound.Store(int32(len(r.entries) + r.startTotal)) // a first scan's loads have no entry yet
	r.scanLeft.Store(int32(r.startTotal))
	if r.startTotal > 0 {
		r.log.Info("registry: loading the tools folder in the background", "modules", r.startTotal)
	}
	r.checkStarted()
	r.mu.Unlock()
	if cfg.Dir != "" && !cfg.Static {
		wctx, stop := context.WithCancel(context.Background())
		r.stop, r.done = stop, make(chan struct{})
		go r.watch(wctx, r.newWatcher())
	}
	return r, nil
}

// Started returns a channel closed once the loads that Open left running
// (LoadWait passed before they ended) have all ended — loaded, failed or
// abandoned at a phase deadline — and the snapshot holding their outcomes
// is published; at once when Open waited for every load; and at Close. A process that
// listens before its tools folder is loaded reports itself ready then
// (/readyz).
func (r *Registry) Started() <-chan struct{} { return r.started }

// startDone records that the first scan's load of name has an outcome,
// and logs the progress. r.mu is held.
func (r *Registry) startDone(name string) {
	if !r.starting[name] {
		return
	}
	delete(r.starting, name)
	r.scanLeft.Store(int32(len(r.starting)))
	r.log.Info("registry: first scan", "file", fileSource(name), "done", r.startTotal-len(r.starting), "of", r.startTotal)
}

// FirstScan reports the tools folder's first scan: found is the module
// files it found (files still being written then are not counted), ended
// those of them whose load has ended — loaded and published, or refused,
// the refusal in the snapshot's failures. ended reaches found by the time
// Started is closed. It is safe for concurrent use and takes no lock.
func (r *Registry) FirstScan() (found, ended int) {
	found = int(r.scanFound.Load())
	return found, found - int(r.scanLeft.Load())
}

// firstScanRunning reports whether loads of the first scan are still
// running, as the snapshot about to be published says (Snapshot.Starting).
// During Open's first discovery, before starting is made, those are the
// loads running. r.mu is held.
func (r *Registry) firstScanRunning() bool {
	switch {
	case r.isStarted:
		return false
	case r.starting == nil:
		return len(r.loading) > 0
	default:
		return len(r.starting) > 0
	}
}

// checkStarted closes started once the first discovery's loads are all
// recorded and published. When the last of them ended with nothing to
// publish (superseded by a newer version of its file, which loads apart),
// it first publishes a generation that is no longer starting, so that no
// snapshot says the first scan runs once Started is closed. r.mu is held.
func (r *Registry) checkStarted() {
	if r.isStarted || r.starting == nil || len(r.starting) > 0 || r.dirty {
		return
	}
	if s := r.current.Load(); s != nil && s.starting && !r.closed && r.waiters == 0 {
		r.dirty = true
		r.publish() // calls checkStarted again
		return
	}
	r.isStarted = true
	close(r.started)
	if r.generation > 1 {
		r.log.Info("registry: the tools folder's first scan is loaded", "generation", r.generation)
	}
}

// Snapshot returns the current snapshot. It never returns nil on a
// Registry that Open returned.
func (r *Registry) Snapshot() *Snapshot { return r.current.Load() }

// Reload rescans the tools folder now and returns the current snapshot:
// a new generation when anything changed, the same one otherwise. Unlike
// the live folder's rescans, it also loads again the modules that failed
// as a whole, in case the failure was transient (a describe that timed out
// on a loaded machine); one that fails the same way makes no new
// generation. Files
// still being written are waited for, up to ten settle periods; a file
// still changing after that keeps its previous version (or stays absent)
// until the live folder sees it settle. A failed rescan (the folder
// cannot be read, ctx ends) publishes nothing.
func (r *Registry) Reload(ctx context.Context) (*Snapshot, error) {
	return r.discover(ctx, true, true)
}

// Close stops the live folder, abandons the loads in progress (wasmtool
// closes what they produce when they end), retires every module and waits
// until every running item has ended and every module is closed, or until
// ctx ends (the modules then close as their last items end). It returns
// within ctx whatever a load is doing. WASM items started after Close are
// refused with service_unavailable; builtin runners belong to their
// caller and are not touched. It is safe to call more than once.
func (r *Registry) Close(ctx context.Context) error {
	if r.stop != nil {
		r.stop()
		<-r.done
	}
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		if !r.isStarted { // nothing will load any more: no one waits for it
			r.isStarted = true
			close(r.started)
		}
		r.loadStop()
		for _, j := range r.loading {
			j.supersede()
		}
		for _, e := range r.entries {
			if e.mod != nil {
				e.mod.retire(true)
			}
		}
		for _, m := range r.retiring {
			m.retire(true)
		}
		r.entries, r.retiring = nil, nil
	}
	r.mu.Unlock()

	// The load goroutines return promptly once loadCtx ends: wasmtool
	// abandons what cannot be interrupted.
	jobsDone := make(chan struct{})
	go func() {
		r.jobs.Wait()
		close(jobsDone)
	}()
	select {
	case <-jobsDone:
	case <-ctx.Done():
		return fmt.Errorf("closing the registry: waiting for loads: %w", ctx.Err())
	}

	r.modMu.Lock()
	if r.open == 0 {
		r.modMu.Unlock()
		return nil
	}
	if r.drained == nil {
		r.drained = make(chan struct{})
	}
	drained := r.drained
	r.modMu.Unlock()
	select {
	case <-drained:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("closing the registry: waiting for running items: %w", ctx.Err())
	}
}

// moduleOpened and moduleClosed count the modules whose Tool is open.
func (r *Registry) moduleOpened() {
	r.modMu.Lock()
	defer r.modMu.Unlock()
	r.open++
}

func (r *Registry) moduleClosed() {
	r.modMu.Lock()
	defer r.modMu.Unlock()
	r.open--
	if r.open == 0 && r.drained != nil {
		close(r.drained)
		r.drained = nil
	}
}

// maxSettleWaits bounds how many settle periods a synchronous discovery
// waits for files still being written.
const maxSettleWaits = 10

// discover rescans and publishes a new generation when anything changed.
// It waits for the loads the scans start, up to Config.LoadWait, and with
// wait for pending files to settle, up to maxSettleWaits settle periods,
// and publishes once at the end. With retryFailed, the first scan loads
// again the modules that failed as a whole.
func (r *Registry) discover(ctx context.Context, wait, retryFailed bool) (*Snapshot, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	r.waiters++
	r.mu.Unlock()
	now := time.Now()
	give := now.Add(maxSettleWaits * r.cfg.Settle)
	var until time.Time
	if r.cfg.LoadWait > 0 {
		until = now.Add(r.cfg.LoadWait)
	}
	err := func() error {
		for {
			r.mu.Lock()
			if r.closed {
				r.mu.Unlock()
				return ErrClosed
			}
			pending, running, err := r.scan(retryFailed)
			r.mu.Unlock()
			if err != nil {
				return err
			}
			retryFailed = false
			unsettled, err := r.awaitLoads(ctx, running, until)
			if err != nil {
				return err
			}
			if unsettled && time.Now().Before(give) {
				continue // the next scan sees when it settles
			}
			if !wait || pending.IsZero() || pending.After(give) {
				return nil
			}
			t := time.NewTimer(time.Until(pending))
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
	}()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waiters--
	if err != nil {
		return nil, err
	}
	r.publish()
	return r.current.Load(), nil
}

// publish publishes the entries and builtins as the next generation when
// they changed, then retires the modules the new generation dropped.
// r.mu is held.
func (r *Registry) publish() {
	defer r.checkStarted()
	if !r.dirty {
		return
	}
	pkgs := append([]*pkg(nil), r.builtins...)
	for _, name := range sortedKeys(r.entries) {
		pkgs = append(pkgs, r.entries[name].pkg)
	}
	r.generation++
	s := transact(r.generation, pkgs, r.log)
	s.starting = r.firstScanRunning()
	r.current.Store(s)
	r.dirty = false
	r.log.Info("registry: published", "generation", s.Generation(),
		"services", len(s.services), "failures", len(s.failures))
	for _, m := range r.retiring {
		m.retire(false)
	}
	r.retiring = nil
}
