// Spare workers: a small pool of workers started and verified up to their
// ready frame before any item needs them, each handed exactly one item
// and then cleaned up like any worker, replaced in the background after
// use; watched while idle, so that one that dies is replaced and never
// handed an item; reaped by Close.

package supervisor

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Timing of the spare pool. None of them is a test expectation.
const (
	// spareStartTimeout bounds a spare's start, from spawn to its verified
	// ready frame.
	spareStartTimeout = 30 * time.Second
	// spareRetryMin and spareRetryMax bound the pause after a spare failed
	// to start; it doubles with each failure in a row.
	spareRetryMin = 50 * time.Millisecond
	spareRetryMax = 5 * time.Second
)

// SpareMemoryLimitBytes is the memory limit of the job cgroup a spare
// waits in, in the cgroup modes, until an item's limit replaces it. An
// idle worker uses a few MiB; what its Go runtime allocated before its
// ready frame stays charged to the server's own cgroup.
const SpareMemoryLimitBytes = 64 << 20

// sparePool keeps want spare workers ready. A nil pool has none: take
// returns nil and the counters stay zero.
//
// A spare belongs to whoever removes it from ready, under mu: take (for an
// item, or to discard it when it is no longer usable), Close (to reap
// it), or its watch goroutine (when it died while idle). Whoever removes
// it closes its claimed channel, after setting discarded when it is not
// for an item; the watch goroutine then reaps a discarded spare.
type sparePool struct {
	s    *Supervisor
	want int
	ctx  context.Context
	stop context.CancelFunc
	wake chan struct{}
	// wg counts the filler and the watch goroutines, which reap what
	// they own before they end.
	wg       sync.WaitGroup
	doneOnce sync.Once
	done     chan struct{} // closed once wg is done after close

	mu       sync.Mutex
	closed   bool
	ready    []*worker
	starting int
	// placing counts the starting spares whose job cgroup may exist (being
	// made, made, or not yet removed after a failure) while they are not
	// in ready.
	placing int
	counts  spareCounts
}

// spareCounts are the pool's counters since New.
type spareCounts struct {
	started, used, replaced, lost, failed uint64
}

// newSparePool starts a pool of want spares: its filler starts them one
// at a time, in the background.
func newSparePool(s *Supervisor, want int) *sparePool {
	ctx, stop := context.WithCancel(context.Background())
	p := &sparePool{s: s, want: want, ctx: ctx, stop: stop, wake: make(chan struct{}, 1), done: make(chan struct{})}
	p.wg.Add(1)
	go p.fill()
	return p
}

// signal wakes the filler.
func (p *sparePool) signal() {
	if p == nil {
		return
	}
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// fill keeps len(ready)+starting at want, starting one spare at a time,
// until Close. A spare that fails to start is reaped and retried after a
// pause that grows with each failure in a row.
func (p *sparePool) fill() {
	defer p.wg.Done()
	delay := time.Duration(0)
	for {
		p.mu.Lock()
		short := !p.closed && len(p.ready)+p.starting < p.want
		if short {
			p.starting++
		}
		p.mu.Unlock()
		if !short {
			select {
			case <-p.wake:
				continue
			case <-p.ctx.Done():
				return
			}
		}
		w, err := p.start()
		p.mu.Lock()
		if err != nil && p.ctx.Err() == nil {
			p.counts.failed++
		}
		if err == nil && !p.closed {
			p.starting--
			if w.cg != nil {
				p.placing--
			}
			p.ready = append(p.ready, w)
			p.wg.Add(1) // under mu, before close: Close's Wait sees it
			go p.watch(w)
			w = nil
		}
		p.mu.Unlock()
		if w != nil {
			p.reap(w)
			if err != nil && p.ctx.Err() == nil {
				w.log.Warn("supervisor: a spare worker failed to start", "error", err, "exit", w.exitText(),
					"stderr", w.stderr.String())
			}
		}
		if err != nil || w != nil {
			p.mu.Lock()
			p.starting--
			if w != nil && w.cg != nil {
				p.placing--
			}
			p.mu.Unlock()
		}
		if err == nil {
			delay = 0
			continue
		}
		delay = min(max(2*delay, spareRetryMin), spareRetryMax)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-p.ctx.Done():
			t.Stop()
			return
		}
	}
}

// start spawns one spare and waits for its verified ready frame. It
// returns the worker whenever one was spawned, so that the caller reaps a
// failed one.
func (p *sparePool) start() (*worker, error) {
	w := p.s.newWorker()
	w.ahead = true
	if err := w.spawn(); err != nil {
		return nil, fmt.Errorf("starting a spare worker: %w", err)
	}
	p.mu.Lock()
	p.counts.started++
	if p.counts.started > uint64(p.want) {
		p.counts.replaced++
	}
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(p.ctx, spareStartTimeout)
	defer cancel()
	if err := w.awaitReady(ctx, time.Now().Add(spareStartTimeout)); err != nil {
		return w, err
	}
	if h := p.s.sys.cg; h != nil {
		// Placed in its job cgroup now, in the background: moving a
		// process between cgroups costs milliseconds, which an item then
		// does not wait for. The job's limit replaces the spare's at
		// hand-off.
		// Counted as placing before its directory exists, so that no one
		// who sees placing == 0 finds a job cgroup the pool does not list.
		p.mu.Lock()
		p.placing++
		p.mu.Unlock()
		cg, err := h.newJob(p.s.sys.spareJobName(), SpareMemoryLimitBytes)
		p.mu.Lock()
		if err != nil {
			p.placing--
		} else {
			w.cg = cg
		}
		p.mu.Unlock()
		if err != nil {
			return w, fmt.Errorf("making a spare's job cgroup: %w", err)
		}
		if err := cg.add(w.pid); err != nil {
			return w, fmt.Errorf("placing a spare in its job cgroup: %w", err)
		}
	}
	return w, nil
}

// watch waits while the spare is idle: when it exits before anyone took
// it (killed from outside), it is taken out of the pool, reaped and
// replaced; when it is taken to be discarded, it is reaped.
func (p *sparePool) watch(w *worker) {
	defer p.wg.Done()
	select {
	case <-w.exited:
		p.mu.Lock()
		i := slices.Index(p.ready, w)
		if i >= 0 {
			p.ready = slices.Delete(p.ready, i, i+1)
			p.counts.lost++
		}
		p.mu.Unlock()
		if i >= 0 {
			w.discarded = true
			close(w.claimed)
			p.signal()
			p.reap(w)
			w.log.Warn("supervisor: a spare worker died while idle; it is replaced", "exit", w.exitText())
			return
		}
		<-w.claimed // taken meanwhile: the taker decided
	case <-w.claimed:
	}
	if w.discarded {
		p.reap(w)
	}
}

// reap cleans up a spare that is not handed an item.
func (p *sparePool) reap(w *worker) {
	if _, _, err := w.cleanup(); err != nil {
		p.s.quarantined()
		w.log.Error("supervisor: a spare worker's cleanup is not confirmed", "error", err)
	}
}

// take returns a ready spare for one item, or nil when none is ready. A
// spare found unusable (exited, exiting, stopped, or with a kill pending
// since it was last seen) is discarded and the next one tried.
func (p *sparePool) take() *worker {
	if p == nil {
		return nil
	}
	for {
		p.mu.Lock()
		if p.closed || len(p.ready) == 0 {
			p.mu.Unlock()
			return nil
		}
		w := p.ready[0]
		p.ready = slices.Delete(p.ready, 0, 1)
		p.mu.Unlock()
		usable := w.idleUsable()
		p.mu.Lock()
		if usable {
			p.counts.used++
		} else {
			p.counts.lost++
		}
		p.mu.Unlock()
		if usable {
			w.spare = true
			close(w.claimed)
			return w
		}
		w.log.Warn("supervisor: a spare worker is no longer usable; replacing it")
		w.discarded = true
		close(w.claimed)
		p.signal()
	}
}

// lostAtHandOff counts a spare that died between take and its Taken byte, and
// starts its replacement.
func (p *sparePool) lostAtHandOff() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.counts.used--
	p.counts.lost++
	p.mu.Unlock()
	p.signal()
}

// stats fills the spare members of st.
func (p *sparePool) stats(st *Stats) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	st.Spares = p.want
	st.SparesReady = len(p.ready)
	st.SparesStarting = p.starting
	c := p.counts
	st.SparesStarted, st.SparesUsed, st.SparesReplaced = c.started, c.used, c.replaced
	st.SparesLost, st.SparesFailed = c.lost, c.failed
	for _, w := range p.ready {
		if ps, err := readStat(w.pid); err == nil && ps.StartTime == w.self.StartTime {
			st.SpareMemoryBytes += ps.RSSPages * p.s.sys.pageSize
		}
	}
}

// close stops the filler and reaps every spare, ready or starting, and
// waits for their cleanup within ctx. It is safe to call more than once.
func (p *sparePool) close(ctx context.Context) error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	p.closed = true
	ready := p.ready
	p.ready = nil
	p.mu.Unlock()
	for _, w := range ready {
		w.discarded = true
		close(w.claimed)
	}
	p.stop()
	p.doneOnce.Do(func() {
		go func() {
			p.wg.Wait()
			close(p.done)
		}()
	})
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w: spare workers still being reaped", ErrUnconfirmed)
	}
}

// idleUsable reports whether an idle spare can still be handed an item:
// it has not exited, it is not exiting, stopped or a zombie, and no
// signal is pending for it (a kill(2) that returned is pending until the
// process handles it). A kill that lands after this check, or that the
// worker's runtime has taken already, is caught by handOff when the spare
// ends before its Taken byte (errSpareGone); one that lands after the
// Taken byte kills a worker that has its item, as it may kill a fresh
// worker.
func (w *worker) idleUsable() bool {
	if w.hasExited() {
		return false
	}
	st, err := readStat(w.pid)
	if err != nil || st.StartTime != w.self.StartTime || st.exiting() {
		return false
	}
	return !signalPending(w.pid)
}

// hasExited reports whether the worker has exited, asking the kernel when
// the exit watch has not seen it yet.
func (w *worker) hasExited() bool {
	return w.isExited() || exitedPID(w.pid)
}
