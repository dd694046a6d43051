package jobs

import (
	"context"
	"sync"
)

// subscription is one event stream. Publishers append to its queue and
// never wait for the subscriber: consecutive progress events are merged
// into the latest, and state events are few (a job has at most four per
// run), so the queue stays short however slow the reader is.
type subscription struct {
	mu    sync.Mutex
	queue []Event
	wake  chan struct{} // capacity 1
}

// maxQueued bounds a subscription's queue all the same; past it the oldest
// events are dropped (the version check lets the reader skip gaps).
const maxQueued = 256

func (sub *subscription) push(ev Event) {
	sub.mu.Lock()
	if n := len(sub.queue); ev.Kind == EventProgress && n > 0 && sub.queue[n-1].Kind == EventProgress {
		sub.queue[n-1] = ev
	} else {
		sub.queue = append(sub.queue, ev)
		if len(sub.queue) > maxQueued {
			sub.queue = sub.queue[len(sub.queue)-maxQueued:]
		}
	}
	sub.mu.Unlock()
	select {
	case sub.wake <- struct{}{}:
	default:
	}
}

func (sub *subscription) take() []Event {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	evs := sub.queue
	sub.queue = nil
	return evs
}

// Subscribe streams job id's events to its owner, for server-sent events.
// The first event is a state event with the job as it is now; then come the
// state changes and progress reports, in order, each state change once (a
// slow reader may miss intermediate progress reports, never a state). The
// channel is closed after the event of a final state, when ctx ends, or when
// the Service closes. It returns ErrNotFound for another owner's job, and
// an error wrapping store.ErrBusy when the database could not give the
// snapshot within [store.Budget].
//
// Events come from this process's runs and, on PostgreSQL, from every
// replica's through NOTIFY (notify.go): a state change made elsewhere is
// read and delivered once its notification arrives. Every followed job is
// also read again every Config.EventPoll, and after the listener
// reconnects, should an event have been lost or made by a process that
// sends none (OpenControl's on SQLite).
func (s *Service) Subscribe(ctx context.Context, id, owner string) (<-chan Event, error) {
	sub := &subscription{wake: make(chan struct{}, 1)}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	// Registered before the snapshot is read, so that no change between
	// the two is missed; the version check drops what the snapshot
	// already holds.
	if s.subs[id] == nil {
		s.subs[id] = map[*subscription]struct{}{}
	}
	s.subs[id][sub] = struct{}{}
	s.subWG.Add(1)
	s.mu.Unlock()
	job, err := s.get(ctx, id, owner)
	if err != nil {
		s.unsubscribe(id, sub)
		s.subWG.Done()
		return nil, err
	}
	out := make(chan Event)
	go s.pump(ctx, id, sub, job, out)
	return out, nil
}

// pump delivers sub's events to out until a final state, ctx's end or
// Close.
func (s *Service) pump(ctx context.Context, id string, sub *subscription, first *Job, out chan<- Event) {
	defer s.subWG.Done()
	defer close(out)
	defer s.unsubscribe(id, sub)
	send := func(ev Event) bool {
		select {
		case out <- ev:
			return true
		case <-ctx.Done():
			return false
		case <-s.done:
			return false
		}
	}
	last := first.Version
	if !send(stateEvent(first)) || first.State.Final() {
		return
	}
	for {
		select {
		case <-sub.wake:
		case <-ctx.Done():
			return
		case <-s.done:
			return
		}
		for _, ev := range sub.take() {
			if ev.Version < last || (ev.Kind == EventState && ev.Version == last) {
				continue // already delivered, or older than what was
			}
			if !send(ev) {
				return
			}
			if ev.Kind == EventState {
				last = ev.Version
				if ev.State.Final() {
					return
				}
			}
		}
	}
}

func (s *Service) unsubscribe(id string, sub *subscription) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.subs[id], sub)
	if len(s.subs[id]) == 0 {
		delete(s.subs, id)
	}
}

// publish hands ev, an event of this process's making, to job id's
// subscribers here and, on PostgreSQL, to the other replicas'. Called
// after the change it reports committed. It does not wait for the
// database, except on OpenControl's Service, which sends at once (notify).
func (s *Service) publish(id string, ev Event) {
	s.deliver(id, ev)
	s.notify(id, ev)
}

// deliver hands ev to job id's subscribers in this process.
func (s *Service) deliver(id string, ev Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sub := range s.subs[id] {
		sub.push(ev)
	}
}

// followed reports whether job id has subscribers in this process.
func (s *Service) followed(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.subs[id]) > 0
}

// followedJobs lists the jobs with subscribers in this process.
func (s *Service) followedJobs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.subs))
	for id := range s.subs {
		ids = append(ids, id)
	}
	return ids
}

// publishState publishes job id as it is now in the database and returns
// its version (0 when it could not be read: the other replicas are still
// told that it changed, and read it themselves).
func (s *Service) publishState(ctx context.Context, id string) int64 {
	job, err := s.loadJob(context.WithoutCancel(ctx), id)
	if err != nil {
		s.log.Warn("jobs: reading a job to publish it", "job", id, "error", err)
		s.notify(id, Event{Kind: EventState})
		return 0
	}
	s.publish(id, stateEvent(job))
	return job.Version
}

func stateEvent(j *Job) Event {
	return Event{Kind: EventState, Version: j.Version, State: j.State, Job: j}
}
