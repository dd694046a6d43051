// The memory monitor of a running job: the OOM-kill count of its cgroup,
// or the resident memory of its observed process tree, sampled at most
// sampleInterval apart.

package supervisor

import (
	"time"
)

// startMonitor starts the job's memory monitor: the OOM-kill count of its
// cgroup, or the observed tree's resident memory, at most sampleInterval
// apart. A breach closes w.breach.
func (w *worker) startMonitor() {
	if w.cg == nil {
		w.tree = newTree(w.self)
	}
	w.monitorStop, w.monitorDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(w.monitorDone)
		t := time.NewTicker(sampleInterval)
		defer t.Stop()
		for {
			if w.sample() {
				w.breachOnce.Do(func() { close(w.breach) })
			}
			select {
			case <-w.monitorStop:
				return
			case <-t.C:
			}
		}
	}()
}

// stopMonitor stops the monitor and waits for it; afterwards the tree and
// the samples belong to the caller.
func (w *worker) stopMonitor() {
	if w.monitorStop != nil {
		close(w.monitorStop)
		<-w.monitorDone
		w.monitorStop = nil
	}
}

// sample checks the job's memory once and reports a breach.
func (w *worker) sample() bool {
	if w.cg != nil {
		n, ok := w.cg.oomKills()
		return ok && n > 0
	}
	live := w.observe()
	var rss int64
	for _, p := range live {
		rss += p.RSSPages
	}
	rss *= w.s.sys.pageSize
	if !w.sampled || rss > w.peakSampled {
		w.peakSampled, w.sampled = rss, true
	}
	if rss > w.job.Operation.MemoryLimitBytes {
		w.observed = true
		return true
	}
	return false
}

// observe scans /proc and returns the tree's live members. It is used
// only by the monitor, or after the monitor stopped.
func (w *worker) observe() []procStat {
	if w.tree == nil {
		w.tree = newTree(w.self)
	}
	procs, err := scanProcs()
	if err != nil {
		return nil
	}
	return w.tree.update(procs)
}
