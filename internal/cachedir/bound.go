package cachedir

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"
)

// DefaultMaxBytes is the bound toolhost applies when none is configured:
// 1 GiB, room for the bundled modules' compiled code and images (about
// 90 MB) many times over, and for a few dozen dropped tools.
const DefaultMaxBytes = 1 << 30

// DefaultDelay is how long a Bound waits after a write before it prunes,
// so that a burst of writes (a module's compiled code, then its image)
// costs one pass.
const DefaultDelay = time.Second

// pollInterval is how often a Bound prunes where it cannot watch the
// folder.
const pollInterval = time.Minute

// Config configures a Bound.
type Config struct {
	// Dir is the cache folder; empty for none (the Bound does nothing).
	Dir string
	// MaxBytes bounds the entries' total size; 0 or less bounds nothing.
	MaxBytes int64
	// Delay is how long after a write the Bound prunes; DefaultDelay when
	// zero.
	Delay time.Duration
	// Logger receives a line per pass that evicted something, and the
	// errors; none when nil.
	Logger *slog.Logger
}

// Bound keeps a cache folder within its size: it prunes when opened,
// after writes to the folder, and when closed, and marks entries used
// when a process opens them (where it can watch the folder: Linux). Its
// methods are safe for concurrent use.
type Bound struct {
	cfg  Config
	kick chan struct{}
	stop chan struct{}
	done chan struct{}
	w    io.Closer

	closeOnce sync.Once
}

// errUnsupported is returned by watch where the folder cannot be watched.
var errUnsupported = errors.New("watching a cache folder is not supported on this platform")

// Open prunes the folder once and starts keeping it within the bound.
// The caller calls Close.
func Open(cfg Config) (*Bound, error) {
	if cfg.Delay <= 0 {
		cfg.Delay = DefaultDelay
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	b := &Bound{cfg: cfg, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if cfg.Dir == "" {
		close(b.done)
		return b, nil
	}
	// As wazero makes it, so that the folder can be watched from the start.
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		close(b.done)
		return nil, err
	}
	b.prune("start")
	poll := false
	w, err := watch(cfg.Dir, Touch, b.written)
	if err != nil {
		if !errors.Is(err, errUnsupported) {
			cfg.Logger.Warn("cache folder not watched: pruned every minute, compiled code aged by its access time", "dir", cfg.Dir, "err", err)
		}
		poll = true
	} else {
		b.w = w
	}
	go b.loop(poll)
	return b, nil
}

// written is called after an entry is written: a prune follows after the
// delay.
func (b *Bound) written() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

func (b *Bound) loop(poll bool) {
	defer close(b.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var tick <-chan time.Time
	if poll {
		t := time.NewTicker(pollInterval)
		defer t.Stop()
		tick = t.C
	}
	pending := false
	for {
		select {
		case <-b.stop:
			timer.Stop()
			return
		case <-b.kick:
			if !pending {
				timer.Reset(b.cfg.Delay)
				pending = true
			}
		case <-timer.C:
			pending = false
			b.prune("write")
		case <-tick:
			b.prune("poll")
		}
	}
}

func (b *Bound) prune(why string) {
	st, err := Prune(b.cfg.Dir, b.cfg.MaxBytes)
	if err != nil {
		b.cfg.Logger.Warn("pruning the cache folder", "dir", b.cfg.Dir, "err", err)
		return
	}
	if st.Evicted > 0 || st.Stale > 0 {
		b.cfg.Logger.Info("cache folder pruned", "dir", b.cfg.Dir, "after", why,
			"bytes", st.Bytes, "max_bytes", b.cfg.MaxBytes, "evicted", st.Evicted,
			"evicted_bytes", st.EvictedBytes, "stale_temporaries", st.Stale, "tier_markers", st.Markers)
	}
}

// Close stops watching the folder and prunes it a last time (a one-shot
// command's writes are then bounded too). It is safe to call more than
// once, and on a nil Bound.
func (b *Bound) Close() error {
	if b == nil {
		return nil
	}
	var err error
	b.closeOnce.Do(func() {
		if b.cfg.Dir == "" {
			return
		}
		if b.w != nil {
			err = b.w.Close()
		}
		close(b.stop)
		<-b.done
		b.prune("close")
	})
	return err
}
