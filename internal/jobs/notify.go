package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Job events across replicas. On a PostgreSQL store every replica sends
// the events of the runs it makes on one channel (NOTIFY, after the
// change committed) and listens to it on a connection of its own, handing
// the other replicas' events to its subscribers: a progress report as it
// came, a state change by reading the job, as publishState does. A poll
// of the followed jobs every Config.EventPoll, on every store, is the
// safety net for an event that never came (docs/jobs.md#events).

// eventChannel is the PostgreSQL channel of job events. Channels are
// per database, not per schema: a replica of another schema's deployment
// on the same database hears events of jobs it does not know and drops
// them.
const eventChannel = "toolhost_jobs"

const (
	// maxNoteBytes bounds a notification's payload: PostgreSQL refuses
	// 8000 bytes or more. A progress message that does not fit is cut.
	maxNoteBytes = 7900
	// maxPendingNotes bounds the notes waiting to be sent; past it the
	// oldest go (the poll catches a lost state change).
	maxPendingNotes = 4096
	// progressGap is the least time between two sends made of progress
	// notes only: a handler reporting in a tight loop costs the database
	// a few NOTIFYs a second, the latest report of each job. A state
	// change is sent at once.
	progressGap = 50 * time.Millisecond
	// noteTimeout bounds one send, one read of a job for an event, and
	// one connection attempt of the listener.
	noteTimeout = 5 * time.Second
	// listenIdle is how long the listener waits for a notification before
	// it pings its connection, so that a connection gone silent (a
	// partition, not a restart, which closes it) is found and replaced.
	listenIdle = 30 * time.Second
	// reconnectMin and reconnectMax bound the listener's wait between two
	// failed connection attempts (doubling from the first).
	reconnectMin = 100 * time.Millisecond
	reconnectMax = 2 * time.Second
	// listenerName is the listening connection's application_name, as
	// pg_stat_activity shows it.
	listenerName = "toolhost job events"
)

// note is one job event as a notification carries it.
type note struct {
	Job     string    `json:"j"`
	Version int64     `json:"v"`
	Kind    EventKind `json:"k"`
	// Origin is the sending Service's id: a Service drops its own
	// notes, its subscribers had the event already.
	Origin  string `json:"o"`
	Done    int64  `json:"d,omitempty"`
	Total   int64  `json:"t,omitempty"`
	Message string `json:"m,omitempty"`
}

// payload is n as a notification's payload, its message cut to fit.
func (n note) payload() string {
	b, _ := json.Marshal(n)
	if len(b) < maxNoteBytes || n.Message == "" {
		return string(b)
	}
	cut := len(n.Message) - (len(b) - maxNoteBytes) - 8 // JSON escapes grow the text: cut again below if need be
	for cut > 0 && !utf8.RuneStart(n.Message[cut]) {
		cut--
	}
	n.Message = n.Message[:max(cut, 0)]
	return n.payload()
}

// eventBus carries a Service's events to and from the other replicas, and
// polls the followed jobs. Its goroutines end in stop.
type eventBus struct {
	s      *Service
	origin string
	cancel context.CancelFunc
	wg     sync.WaitGroup
	out    *sender // nil on SQLite

	mu  sync.Mutex
	pid uint32 // the listening connection's backend, 0 between two
}

// startEvents starts the poll of followed jobs and, on a PostgreSQL store,
// the sender and the listener: Open fails when the first LISTEN does, a
// later loss of the connection is retried for as long as the Service runs.
func (s *Service) startEvents(ctx context.Context) error {
	raw := make([]byte, 8)
	rand.Read(raw)
	ctxBus, cancel := context.WithCancel(context.Background())
	b := &eventBus{s: s, origin: hex.EncodeToString(raw), cancel: cancel}
	if s.replicated {
		conn, err := b.connect(ctx)
		if err != nil {
			cancel()
			return fmt.Errorf("listening for job events: %w", err)
		}
		b.out = newSender(s.cfg.Store.Pool(), s)
		b.wg.Add(2)
		go b.out.run(&b.wg)
		go b.listen(ctxBus, conn)
	}
	if s.cfg.EventPoll > 0 {
		b.wg.Add(1)
		go b.poll(ctxBus)
	}
	s.bus = b
	return nil
}

// stopEvents sends the events still waiting (within noteTimeout), then
// stops the listener and the poll. It is safe to call more than once, and
// without startEvents.
func (s *Service) stopEvents() {
	b := s.bus
	if b == nil {
		return
	}
	if b.out != nil {
		b.out.close()
	}
	b.cancel()
	b.wg.Wait()
}

// notify sends ev of job id to the other replicas (nothing on SQLite):
// through the bus's sender, or at once from a Service that has no bus,
// OpenControl's, whose cancellations the serving replicas' subscribers
// would otherwise see only at their poll.
func (s *Service) notify(id string, ev Event) {
	if !s.replicated {
		return
	}
	n := note{Job: id, Version: ev.Version, Kind: ev.Kind}
	if ev.Progress != nil && ev.Kind == EventProgress {
		n.Done, n.Total, n.Message = ev.Progress.Done, ev.Progress.Total, ev.Progress.Message
	}
	if b := s.bus; b != nil {
		n.Origin = b.origin
		b.out.add(n)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), noteTimeout)
	defer cancel()
	if err := sendNotes(ctx, s.cfg.Store.Pool(), []note{n}); err != nil {
		s.log.Warn("jobs: sending a job event to the replicas", "job", id, "error", err)
	}
}

// connect opens the listening connection, outside the store's pool (it is
// held for the Service's life), and listens on eventChannel.
func (b *eventBus) connect(ctx context.Context) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, noteTimeout)
	defer cancel()
	cfg := b.s.cfg.Store.Pool().Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = listenerName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+eventChannel); err != nil {
		conn.Close(ctx) //nolint:errcheck // a connection given up: LISTEN's error is the one that counts
		return nil, err
	}
	b.mu.Lock()
	b.pid = conn.PgConn().PID()
	b.mu.Unlock()
	return conn, nil
}

// listen hands the other replicas' events to this Service's subscribers
// until ctx ends. When the connection fails it connects again (waiting
// reconnectMin, doubling to reconnectMax, between failed attempts) and
// then reads every followed job: events sent meanwhile were lost.
func (b *eventBus) listen(ctx context.Context, conn *pgx.Conn) {
	defer b.wg.Done()
	log := b.s.log
	for {
		err := b.receive(ctx, conn)
		b.mu.Lock()
		b.pid = 0
		b.mu.Unlock()
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn.Close(closeCtx) //nolint:errcheck // a connection given up: receive's error is the one that counts
		cancel()
		if ctx.Err() != nil {
			return
		}
		log.Warn("jobs: the connection listening for other replicas' job events failed; reconnecting", "error", err)
		wait := reconnectMin
		for conn = nil; conn == nil; {
			if conn, err = b.connect(ctx); err == nil {
				break
			}
			if ctx.Err() != nil {
				return
			}
			log.Debug("jobs: reconnecting the job events' listener", "error", err, "retry_in", wait)
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return
			}
			wait = min(2*wait, reconnectMax)
		}
		log.Info("jobs: listening for other replicas' job events again")
		b.refreshAll(ctx)
	}
}

// receive handles the notifications of conn until it fails or ctx ends,
// pinging it after listenIdle without one.
func (b *eventBus) receive(ctx context.Context, conn *pgx.Conn) error {
	for {
		wait, cancel := context.WithTimeout(ctx, listenIdle)
		n, err := conn.WaitForNotification(wait)
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil && pgconn.Timeout(err):
			ping, cancel := context.WithTimeout(ctx, noteTimeout)
			err = conn.Ping(ping)
			cancel()
			if err != nil {
				return fmt.Errorf("pinging: %w", err)
			}
		case err != nil:
			return err
		default:
			b.handle(ctx, n.Payload)
		}
	}
}

// handle passes one notification to the subscribers of its job, if any.
// In the listener's goroutine, one after the other, so that a job's
// events reach its subscribers in the order they were sent.
func (b *eventBus) handle(ctx context.Context, payload string) {
	var n note
	if err := json.Unmarshal([]byte(payload), &n); err != nil || n.Job == "" {
		b.s.log.Debug("jobs: a job event notification that is not ours", "payload", payload)
		return
	}
	if n.Origin == b.origin || !b.s.followed(n.Job) {
		return
	}
	switch n.Kind {
	case EventProgress:
		p := Progress{Done: n.Done, Total: n.Total, Message: n.Message}
		b.s.deliver(n.Job, Event{Kind: EventProgress, Version: n.Version, State: Running, Progress: &p})
	case EventState:
		b.refresh(ctx, n.Job)
	}
}

// refresh reads job id and hands it to its subscribers as a state event;
// a subscription drops a version it has already delivered.
func (b *eventBus) refresh(ctx context.Context, id string) {
	read, cancel := context.WithTimeout(ctx, noteTimeout)
	defer cancel()
	job, err := b.s.loadJob(read, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return // swept: its subscribers end with the Service or their context
	case err != nil:
		if ctx.Err() == nil {
			b.s.log.Warn("jobs: reading a job for its subscribers", "job", id, "error", err)
		}
		return
	}
	b.s.deliver(id, stateEvent(job))
}

// refreshAll refreshes every followed job.
func (b *eventBus) refreshAll(ctx context.Context) {
	for _, id := range b.s.followedJobs() {
		if ctx.Err() != nil {
			return
		}
		b.refresh(ctx, id)
	}
}

// poll refreshes every followed job every Config.EventPoll until ctx
// ends: the safety net for a state change whose event never came.
func (b *eventBus) poll(ctx context.Context) {
	defer b.wg.Done()
	t := time.NewTicker(b.s.cfg.EventPoll)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			b.refreshAll(ctx)
		case <-ctx.Done():
			return
		}
	}
}

// sender sends a Service's notes in the order they were added, from one
// goroutine, so that publishing never waits for the database. A progress
// note replaces the job's progress note still waiting (when nothing of
// that job came after it).
type sender struct {
	pool *pgxpool.Pool
	s    *Service

	mu      sync.Mutex
	queue   []note
	urgent  bool // the queue holds a state note: send without the gap
	closing bool
	wake    chan struct{} // capacity 1
	failing bool          // the last send failed (the sender's goroutine only)
}

func newSender(pool *pgxpool.Pool, s *Service) *sender {
	return &sender{pool: pool, s: s, wake: make(chan struct{}, 1)}
}

// add queues n; after close it drops it.
func (o *sender) add(n note) {
	o.mu.Lock()
	if o.closing {
		o.mu.Unlock()
		return
	}
	merged := false
	if n.Kind == EventProgress {
		for i := len(o.queue) - 1; i >= 0; i-- {
			if o.queue[i].Job == n.Job {
				if o.queue[i].Kind == EventProgress {
					o.queue[i], merged = n, true
				}
				break
			}
		}
	}
	if !merged {
		o.queue = append(o.queue, n)
		if len(o.queue) > maxPendingNotes {
			o.queue = o.queue[len(o.queue)-maxPendingNotes:]
		}
	}
	if n.Kind == EventState {
		o.urgent = true
	}
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// take empties the queue.
func (o *sender) take() []note {
	o.mu.Lock()
	defer o.mu.Unlock()
	q := o.queue
	o.queue, o.urgent = nil, false
	return q
}

// state reports whether a note waits, whether one is a state note, and
// whether close was called.
func (o *sender) state() (waiting, urgent, closing bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.queue) > 0, o.urgent, o.closing
}

// close makes run send what waits and return.
func (o *sender) close() {
	o.mu.Lock()
	o.closing = true
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// run sends the queued notes until close: at once when a state note waits
// or close was called, else progressGap after the last send.
func (o *sender) run(wg *sync.WaitGroup) {
	defer wg.Done()
	var last time.Time
	for {
		<-o.wake
		for {
			waiting, urgent, closing := o.state()
			if !waiting {
				if closing {
					return
				}
				break
			}
			if d := progressGap - time.Since(last); !urgent && !closing && d > 0 {
				select {
				case <-time.After(d):
				case <-o.wake: // look again: a state note or close may have come
					continue
				}
			}
			o.send(o.take())
			last = time.Now()
		}
	}
}

// send notifies every note of batch (sendNotes). A batch that fails is dropped and logged
// (once until a send succeeds again): the other replicas read their
// followed jobs again when their listener reconnects, and every
// Config.EventPoll.
func (o *sender) send(batch []note) {
	ctx, cancel := context.WithTimeout(context.Background(), noteTimeout)
	defer cancel()
	err := sendNotes(ctx, o.pool, batch)
	switch {
	case err != nil && !o.failing:
		o.failing = true
		o.s.log.Warn("jobs: sending job events to the other replicas", "events", len(batch), "error", err)
	case err == nil && o.failing:
		o.failing = false
		o.s.log.Info("jobs: sending job events to the other replicas again")
	}
}

// sendNotes notifies every note of notes, in order, in one round trip;
// each NOTIFY is its own transaction.
func sendNotes(ctx context.Context, pool *pgxpool.Pool, notes []note) error {
	var b pgx.Batch
	for _, n := range notes {
		b.Queue("SELECT pg_notify($1, $2)", eventChannel, n.payload())
	}
	return pool.SendBatch(ctx, &b).Close()
}
