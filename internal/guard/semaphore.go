package guard

import (
	"context"
	"sync"
)

// Semaphores bound the runs in flight by key: the concurrency limits of
// the quota table (per caller, per tier). [NewMemorySemaphores] is the
// one-process implementation; [RedisSemaphores] shares the counts between
// replicas, each slot a lease that a replica which dies stops renewing.
type Semaphores interface {
	// Acquire takes one slot of key if fewer than limit are held. The
	// release it returns (when ok) frees the slot; it is safe to call
	// more than once. An error means the count could not be read: no
	// slot is held.
	Acquire(ctx context.Context, key string, limit int) (release func(), ok bool, err error)
	// Held returns the slots of key held now.
	Held(ctx context.Context, key string) (int, error)
}

// MemorySemaphores are counters by key held in this process; a key with
// no holder is dropped. They are safe for concurrent use.
type MemorySemaphores struct {
	mu sync.Mutex
	n  map[string]int
}

// NewMemorySemaphores returns in-process semaphores with nothing held.
func NewMemorySemaphores() *MemorySemaphores { return &MemorySemaphores{n: make(map[string]int)} }

// Acquire implements [Semaphores]; it never fails.
func (s *MemorySemaphores) Acquire(_ context.Context, key string, limit int) (func(), bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n[key] >= limit {
		return nil, false, nil
	}
	s.n[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.n[key]--; s.n[key] <= 0 {
				delete(s.n, key)
			}
		})
	}, true, nil
}

// Held implements [Semaphores].
func (s *MemorySemaphores) Held(_ context.Context, key string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[key], nil
}
