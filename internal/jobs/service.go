package jobs

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/toolhost/toolhost/internal/store"
)

// Defaults of Config.
const (
	DefaultFileTTL          = 24 * time.Hour
	DefaultJobRetention     = 7 * 24 * time.Hour
	DefaultMaxWorkers       = 2
	DefaultMaxFileBytes     = 64 << 20
	DefaultMaxFiles         = 16
	DefaultMaxInputBytes    = 1 << 20
	DefaultMaxOutputFiles   = 1024
	DefaultSweepInterval    = time.Minute
	DefaultProgressInterval = time.Second
	DefaultStopGrace        = 10 * time.Second
	// DefaultRescueAfter is Config.RescueAfter on PostgreSQL: a job of a
	// replica that died is settled by another within about this long
	// (plus River's rescuer interval, 30 s).
	DefaultRescueAfter = 2 * time.Minute
	// DefaultRescueAfterSQLite is Config.RescueAfter on SQLite, where
	// Open settles a dead process's jobs itself.
	DefaultRescueAfterSQLite = 7 * 24 * time.Hour
	// DefaultLeaseTTL is Config.LeaseTTL: renewed every 10 s.
	DefaultLeaseTTL        = 30 * time.Second
	DefaultURLPrefix       = "/api/v1/jobs"
	DefaultMinFreeBytes    = 16 << 20
	DefaultStorageInterval = 5 * time.Second
	DefaultEventPoll       = 5 * time.Second
	defaultMaxAttempts     = 3
	// minSigningKeyBytes is the shortest SigningKey Open takes.
	minSigningKeyBytes = 32
)

// queue is the River queue every ticket goes to.
const queue = "toolhost_jobs"

// typeName is the pattern of a job type: tools.job@1's, which is also the
// one tooldef accepts in run.job.type.
var typeName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)

// Config configures Open. Zero values take the defaults named.
type Config struct {
	// Store is the database; its tables come from the store's migrations
	// and River's. Required. Close does not close it.
	Store *store.Store
	// DataDir is the data directory; job files live under DataDir/jobs
	// unless FilesDir says otherwise. Required.
	DataDir string
	// FilesDir is the folder of the job files when not empty. Replicas on
	// a PostgreSQL store share one, a volume they all mount, so that a job
	// submitted to one is read from another (docs/scale-out.md); on a
	// SQLite store it is locked to one process, as DataDir/jobs is.
	FilesDir string
	// Handlers maps job types ([a-z][a-z0-9_-]*, at most 64 bytes, the
	// pattern of tools.job@1) to their handlers, fixed at Open. Set it or
	// Resolve, not both.
	Handlers map[string]Handler
	// Resolve returns the handler that runs a job type now, or false when
	// none does. It is asked at every Submit, when a job's turn comes
	// (the handler that runs the job is the one it returns then), and when
	// Open or Close settles an interrupted run (for Retryable), so the job
	// types may change while the service runs: the server resolves them
	// against its live tool catalogue. It is called only with names that
	// match the type pattern, from any goroutine, inside the worker's
	// claim transaction: it must be cheap, safe for concurrent use, and
	// must not use the Store. A handler without Run counts as none.
	//
	// Submit refuses a type without a handler (ErrUnknownType). A job
	// whose type has no handler any more when its turn comes fails with
	// unknown_tool, once: it is not requeued, and its owner can Retry it
	// once the type is back.
	Resolve func(jobType string) (Handler, bool)
	// Logger receives the operator's log; River's own messages below Warn
	// are dropped. Nil discards.
	Logger *slog.Logger
	// FileTTL is how long a finished job's files are kept
	// (DefaultFileTTL).
	FileTTL time.Duration
	// JobRetention is how long a finished job's row is kept
	// (DefaultJobRetention); it is raised to FileTTL when shorter.
	JobRetention time.Duration
	// SigningKey is the HMAC-SHA256 key of signed URLs, at least 32
	// bytes. Nil makes a random key: signed URLs then die with the
	// process.
	SigningKey []byte
	// MaxWorkers is how many jobs run at once (DefaultMaxWorkers).
	MaxWorkers int
	// MaxFileBytes is the ceiling of every file's size
	// (DefaultMaxFileBytes).
	MaxFileBytes int64
	// MaxFiles is the most input files of one job (DefaultMaxFiles).
	MaxFiles int
	// MaxInputBytes is the largest input document (DefaultMaxInputBytes).
	MaxInputBytes int
	// MaxOutputFiles is the most output files of one run
	// (DefaultMaxOutputFiles).
	MaxOutputFiles int
	// SweepInterval is how often expired files and old jobs are swept
	// (DefaultSweepInterval).
	SweepInterval time.Duration
	// ProgressInterval is the least time between two writes of a running
	// job's progress to its row (DefaultProgressInterval). Subscribers see
	// every report regardless.
	ProgressInterval time.Duration
	// PollInterval is River's fetch poll interval, the longest a ticket
	// waits when River's notification is missed (River's default, 1s).
	// River's fetch cooldown is lowered to it when it is shorter.
	PollInterval time.Duration
	// StopGrace bounds how long Close waits for handlers after it has
	// cancelled them (DefaultStopGrace).
	StopGrace time.Duration
	// URLPrefix is the path signed URLs start with (DefaultURLPrefix):
	// <prefix>/<id>/files/<name>?expires=…&sig=….
	URLPrefix string
	// MinFreeBytes is the free space below which the jobs folder (or the
	// database's, when it is on another file system) counts as full
	// (DefaultMinFreeBytes): Submit refuses with ErrStorageFull, queued
	// jobs wait, Storage reports it. Negative: no threshold, only failed
	// writes count.
	MinFreeBytes int64
	// StorageInterval is how often the free space is measured, a failed
	// write's condition is checked again, and the jobs held back by a full
	// folder are resumed (DefaultStorageInterval).
	StorageInterval time.Duration
	// RescueAfter is how long a River ticket may be running before River's
	// rescuer hands it out again (River's RescueStuckJobsAfter): on a
	// shared PostgreSQL store, the longest a job of a replica that died
	// waits before another replica settles it (DefaultRescueAfter). On
	// SQLite, Open settles a dead process's jobs at once and the rescuer
	// only tidies River's rows, after DefaultRescueAfterSQLite.
	RescueAfter time.Duration
	// LeaseTTL is how long a running job's lease (jobs.lease_until) lasts
	// from its last renewal; the process running it renews it every third
	// of that (DefaultLeaseTTL). A ticket handed out again while the lease
	// is live belongs to a live run and waits; one whose lease ran out is
	// settled as a crash (worker_crashed, or a rerun when Retryable). Used
	// on PostgreSQL only, where replicas share the jobs.
	LeaseTTL time.Duration
	// Media resolves media references; nil refuses them.
	Media MediaStore
	// EventPoll is how often the jobs that have subscribers here are read
	// again, each handed to them as a state event when it changed: the
	// safety net for a lost event (DefaultEventPoll; negative: never). On
	// PostgreSQL the other replicas' events come by NOTIFY within
	// milliseconds; the poll bounds the wait when one was lost.
	EventPoll time.Duration
	// Slots keeps the jobs' concurrency slots (Submission.Slots): renewed
	// every SlotRenewal while a job runs, released where it reaches a
	// final state. Nil: jobs hold no slots.
	Slots SlotKeeper
	// SlotRenewal is how often a running job's slots are renewed
	// (DefaultSlotRenewal); keep it a third of their lease.
	SlotRenewal time.Duration
	// Now is the clock of file expiry and signed URLs (time.Now). River
	// keeps its own.
	Now func() time.Time
}

// Service is the jobs subsystem: the job store, the runner (River) and the
// files. Its methods are safe for concurrent use.
type Service struct {
	cfg     Config
	db      *sql.DB // the store's writer
	rows    Rows    // every statement on the jobs' tables (rows.go)
	root    string  // DataDir/jobs
	log     *slog.Logger
	key     []byte
	tickets tickets // River, on the store's driver
	unlock  func()
	// replicated is set on a PostgreSQL store, which other processes
	// (replicas) share: Open recovers nothing by itself (their jobs may
	// be running), running jobs hold leases, and River's rescuer re-runs
	// what a dead replica left.
	replicated bool

	// secretsMu guards secretsAEADv, the cipher of the data folder's
	// secrets key once loaded (secrets.go).
	secretsMu    sync.Mutex
	secretsAEADv cipher.AEAD

	mu      sync.Mutex
	closed  bool
	running map[string]*runEntry // jobs this process is running
	pending map[string]struct{}  // jobs being submitted: files on disk, no row yet
	subs    map[string]map[*subscription]struct{}
	bus     *eventBus // events to and from other replicas (notify.go)

	// storage is the data folder's storage condition (storage.go).
	storage *storageWatch

	// stopping is set once Close begins stopping River: a handler whose
	// context ends then was interrupted, not cancelled.
	stopping atomic.Bool
	done     chan struct{} // closed by Close: subscriptions end
	subWG    sync.WaitGroup
	sweepWG  sync.WaitGroup     // the sweeper and the storage watch
	sweepEnd context.CancelFunc // stops the sweeper and the storage watch

	closeOnce sync.Once
	closeErr  error
}

// Open opens the jobs subsystem: it takes the data directory's lock, brings
// River's tables up to date with rivermigrate, recovers the jobs a previous
// process left queued or running (see the package documentation), and starts
// River and the sweeper. The context bounds the opening only. Close releases
// what Open started, even after a partial start.
func Open(ctx context.Context, cfg Config) (*Service, error) {
	s, err := newService(cfg)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.root, 0o700); err != nil {
		return nil, fmt.Errorf("creating the jobs directory: %w", err)
	}
	// One process owns the files of a SQLite store; the replicas of a
	// PostgreSQL store share theirs, each job's folder written by the
	// replica that took it.
	if !s.replicated {
		unlock, err := lockDir(s.root)
		if err != nil {
			return nil, err
		}
		s.unlock = unlock
	}
	s.storage = newStorageWatch(s.root, cfg.Store.Path(), cfg.MinFreeBytes)
	s.checkStorage(false)
	if err := s.start(ctx); err != nil {
		return nil, errors.Join(err, s.Close(context.Background()))
	}
	return s, nil
}

// newService validates cfg and makes the Service Open and OpenControl
// start from: its folders resolved (not created), its signing key, its
// empty maps; nothing started, nothing locked.
func newService(cfg Config) (*Service, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("resolving the data directory: %w", err)
	}
	s := &Service{
		cfg:        cfg,
		db:         cfg.Store.DB(),
		rows:       cfg.Store,
		root:       filepath.Join(dataDir, "jobs"),
		log:        cfg.Logger,
		key:        cfg.SigningKey,
		replicated: cfg.Store.Dialect() == store.Postgres,
		running:    map[string]*runEntry{},
		pending:    map[string]struct{}{},
		subs:       map[string]map[*subscription]struct{}{},
		done:       make(chan struct{}),
		sweepEnd:   func() {},
		unlock:     func() {},
	}
	if s.key == nil {
		s.key = make([]byte, minSigningKeyBytes)
		rand.Read(s.key)
	}
	if cfg.FilesDir != "" {
		if s.root, err = filepath.Abs(cfg.FilesDir); err != nil {
			return nil, fmt.Errorf("resolving the files directory: %w", err)
		}
	}
	return s, nil
}

// start starts the job events (notify.go), migrates River's tables, makes
// the River client, recovers, and starts River and the sweeper.
func (s *Service) start(ctx context.Context) error {
	if err := s.startEvents(ctx); err != nil {
		return err
	}
	riverLog := slog.New(levelFloor{s.log.Handler(), slog.LevelWarn})
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &worker{s: s}); err != nil {
		return fmt.Errorf("registering the River worker: %w", err)
	}
	config := func(log *slog.Logger) *river.Config {
		return &river.Config{
			Logger:            log,
			Queues:            map[string]river.QueueConfig{queue: {MaxWorkers: s.cfg.MaxWorkers}},
			Workers:           workers,
			FetchPollInterval: s.cfg.PollInterval,
			FetchCooldown:     min(s.cfg.PollInterval, river.FetchCooldownDefault),
			// Handlers have their own deadlines (the executor's); River's
			// default one-minute timeout would cut long jobs short.
			JobTimeout: -1,
			// On SQLite, Open recovers the jobs of a dead process at
			// once (recoverJobs) and the rescuer leaves tickets alone
			// (worker.Timeout is -1); on PostgreSQL the rescuer is how
			// another replica gets the tickets of one that died
			// (Config.RescueAfter, the worker's Timeout too).
			RescueStuckJobsAfter: s.cfg.RescueAfter,
		}
	}
	var err error
	if s.tickets, err = openTickets(ctx, s.cfg.Store, config, riverLog); err != nil {
		return fmt.Errorf("making the River client: %w", err)
	}
	// A replica's Open leaves the jobs alone: the other replicas may be
	// running them, or submitting them (files on disk, no row yet), and
	// River's rescuer with the jobs' leases settles what a dead one left.
	if !s.replicated {
		if err := s.recoverJobs(ctx); err != nil {
			return err
		}
		if err := s.sweepOrphans(ctx); err != nil {
			return err
		}
	}
	// River stops through Stop or StopAndCancel in Close, not through
	// this context.
	if err := s.tickets.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("starting River: %w", err)
	}
	sweepCtx, cancel := context.WithCancel(context.Background())
	s.sweepEnd = cancel
	s.sweepWG.Add(2)
	go s.sweepLoop(sweepCtx)
	go s.storageLoop(sweepCtx)
	return nil
}

// handler returns the handler that runs jobType now (Config.Resolve), with
// MaxAttempts defaulted; false for a name that is no job type, for a type
// without a handler, and for a handler without Run.
func (s *Service) handler(jobType string) (Handler, bool) {
	if !typeName.MatchString(jobType) {
		return Handler{}, false
	}
	h, ok := s.cfg.Resolve(jobType)
	if !ok || h.Run == nil {
		return Handler{}, false
	}
	if h.MaxAttempts <= 0 {
		h.MaxAttempts = defaultMaxAttempts
	}
	return h, true
}

// normalize validates c and fills in the defaults.
func (c *Config) normalize() error {
	switch {
	case c.Store == nil:
		return fmt.Errorf("%w: no Store", ErrConfig)
	case c.DataDir == "":
		return fmt.Errorf("%w: no DataDir", ErrConfig)
	case c.SigningKey != nil && len(c.SigningKey) < minSigningKeyBytes:
		return fmt.Errorf("%w: SigningKey has %d bytes, want at least %d", ErrConfig, len(c.SigningKey), minSigningKeyBytes)
	}
	if c.Handlers != nil && c.Resolve != nil {
		return fmt.Errorf("%w: both Handlers and Resolve", ErrConfig)
	}
	for name, h := range c.Handlers {
		if !typeName.MatchString(name) {
			return fmt.Errorf("%w: job type %q is not [a-z][a-z0-9_-]*", ErrConfig, name)
		}
		if h.Run == nil {
			return fmt.Errorf("%w: job type %s has no Run", ErrConfig, name)
		}
	}
	if c.Resolve == nil {
		handlers := maps.Clone(c.Handlers)
		c.Resolve = func(jobType string) (Handler, bool) {
			h, ok := handlers[jobType]
			return h, ok
		}
	}
	c.Handlers = nil
	if c.SigningKey != nil {
		c.SigningKey = append([]byte(nil), c.SigningKey...)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	setDefault(&c.FileTTL, DefaultFileTTL)
	setDefault(&c.JobRetention, DefaultJobRetention)
	c.JobRetention = max(c.JobRetention, c.FileTTL)
	setDefault(&c.MaxWorkers, DefaultMaxWorkers)
	setDefault(&c.MaxFileBytes, DefaultMaxFileBytes)
	setDefault(&c.MaxFiles, DefaultMaxFiles)
	setDefault(&c.MaxInputBytes, DefaultMaxInputBytes)
	setDefault(&c.MaxOutputFiles, DefaultMaxOutputFiles)
	setDefault(&c.SweepInterval, DefaultSweepInterval)
	setDefault(&c.ProgressInterval, DefaultProgressInterval)
	setDefault(&c.StopGrace, DefaultStopGrace)
	setDefault(&c.URLPrefix, DefaultURLPrefix)
	setDefault(&c.PollInterval, river.FetchPollIntervalDefault)
	setDefault(&c.MinFreeBytes, DefaultMinFreeBytes)
	setDefault(&c.StorageInterval, DefaultStorageInterval)
	setDefault(&c.EventPoll, DefaultEventPoll)
	if c.Store.Dialect() == store.Postgres {
		setDefault(&c.RescueAfter, DefaultRescueAfter)
	} else {
		setDefault(&c.RescueAfter, DefaultRescueAfterSQLite)
	}
	setDefault(&c.LeaseTTL, DefaultLeaseTTL)
	setDefault(&c.SlotRenewal, DefaultSlotRenewal)
	if c.LeaseTTL >= c.RescueAfter {
		return fmt.Errorf("%w: LeaseTTL (%s) must be shorter than RescueAfter (%s)", ErrConfig, c.LeaseTTL, c.RescueAfter)
	}
	return nil
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// Close stops the subsystem: Submit and the other calls are refused, River
// stops fetching, and running handlers get until ctx ends to finish; then
// their contexts are cancelled and they get StopGrace more. A job whose
// handler was interrupted this way is rerun at the next Open if its type is
// Retryable, else it fails with service_unavailable (retryable by the
// caller). Event streams end. Close does not close the Store. It is safe to
// call more than once and returns the first call's result.
func (s *Service) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.sweepEnd()
		s.sweepWG.Wait()
		if s.tickets != nil {
			s.stopping.Store(true)
			if err := s.tickets.Stop(ctx); err != nil {
				// River's StopAndCancel cancels the runs' contexts, but a
				// run past River's timeout (a replica's long job) no
				// longer follows River's: cancel them here too.
				s.mu.Lock()
				for _, e := range s.running {
					e.cancel(err)
				}
				s.mu.Unlock()
				hard, cancel := context.WithTimeout(context.Background(), s.cfg.StopGrace)
				if err := s.tickets.StopAndCancel(hard); err != nil {
					s.closeErr = fmt.Errorf("stopping River: handlers still running after the grace period: %w", err)
				}
				cancel()
			}
		}
		s.stopEvents()
		close(s.done)
		s.subWG.Wait()
		if s.unlock != nil {
			s.unlock()
		}
	})
	return s.closeErr
}

// isClosed reports whether Close has begun.
func (s *Service) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// levelFloor drops records below min: River logs every start and stop at
// Info, which is not the operator's business.
type levelFloor struct {
	slog.Handler
	min slog.Level
}

func (h levelFloor) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h levelFloor) WithAttrs(attrs []slog.Attr) slog.Handler {
	return levelFloor{h.Handler.WithAttrs(attrs), h.min}
}

func (h levelFloor) WithGroup(name string) slog.Handler {
	return levelFloor{h.Handler.WithGroup(name), h.min}
}
