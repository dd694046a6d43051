package guard

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// Semaphores bound the runs in flight by key: the concurrency limits of
// the quota table (per caller, per tier). A slot has a holder id; it is
// held either by a run of this process ([Semaphores.Acquire], released by
// the function it returns, kept alive by the process while it runs) or on
// a lease of its own ([Semaphores.AcquireLease]: a job's slot, which any
// process may renew or release by the holder id, and which lapses when
// nobody renews it). [NewMemorySemaphores] is the one-process
// implementation; [RedisSemaphores] shares the slots between replicas.
type Semaphores interface {
	// Acquire takes one slot of key for a run of this process if fewer
	// than limit are held. The release it returns (when ok) frees the
	// slot; it is safe to call more than once. An error means the count
	// could not be read: no slot is held.
	Acquire(ctx context.Context, key string, limit int) (release func(), ok bool, err error)
	// AcquireLease takes one slot of key for holder if fewer than limit
	// are held, until lease from now. Nothing in this process renews it:
	// its holder does (RenewLease), from whichever process. An error
	// means the count could not be read: no slot is held.
	AcquireLease(ctx context.Context, key, holder string, limit int, lease time.Duration) (ok bool, err error)
	// RenewLease extends holder's slot of key to lease from now. It
	// reports false when holder holds none (released, or lapsed): a
	// lapsed slot is not taken again.
	RenewLease(ctx context.Context, key, holder string, lease time.Duration) (bool, error)
	// ReleaseLease frees holder's slot of key; one not held is no error.
	ReleaseLease(ctx context.Context, key, holder string) error
	// Held returns the slots of key held now.
	Held(ctx context.Context, key string) (int, error)
	// Holders lists the slots of key held now, with their leases' ends
	// (the zero time for a run's slot of MemorySemaphores, which has
	// none).
	Holders(ctx context.Context, key string) ([]Holder, error)
	// Reset frees every slot of key, whoever holds it.
	Reset(ctx context.Context, key string) error
}

// Holder is one held slot of a semaphore.
type Holder struct {
	ID string
	// Expires is when the slot lapses unless renewed; zero for none.
	Expires time.Time
}

// newHolderID returns a fresh holder id: 32 hex digits.
func newHolderID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	return hex.EncodeToString(b[:])
}

// MemorySemaphores are slots by key held in this process; a key with no
// holder is dropped. A run's slot has no lease (it dies with the process);
// a leased slot lapses at the end of its lease, like Redis's. They are
// safe for concurrent use.
type MemorySemaphores struct {
	mu  sync.Mutex
	n   map[string]map[string]time.Time // key → holder → lease end (zero: none)
	now func() time.Time
}

// NewMemorySemaphores returns in-process semaphores with nothing held.
func NewMemorySemaphores() *MemorySemaphores {
	return &MemorySemaphores{n: make(map[string]map[string]time.Time), now: time.Now}
}

// live drops key's lapsed holders and returns the rest. s.mu must be held.
func (s *MemorySemaphores) live(key string) map[string]time.Time {
	hs := s.n[key]
	now := s.now()
	for h, until := range hs {
		if !until.IsZero() && !now.Before(until) {
			delete(hs, h)
		}
	}
	if len(hs) == 0 {
		delete(s.n, key)
		return nil
	}
	return hs
}

// take adds holder to key with lease end until if fewer than limit are
// held. s.mu must be held.
func (s *MemorySemaphores) take(key, holder string, limit int, until time.Time) bool {
	hs := s.live(key)
	if len(hs) >= limit {
		return false
	}
	if hs == nil {
		hs = map[string]time.Time{}
		s.n[key] = hs
	}
	hs[holder] = until
	return true
}

// Acquire implements [Semaphores]; it never fails.
func (s *MemorySemaphores) Acquire(_ context.Context, key string, limit int) (func(), bool, error) {
	holder := newHolderID()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.take(key, holder, limit, time.Time{}) {
		return nil, false, nil
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			s.ReleaseLease(context.Background(), key, holder) //nolint:errcheck // MemorySemaphores' never fails
		})
	}, true, nil
}

// AcquireLease implements [Semaphores]; it never fails.
func (s *MemorySemaphores) AcquireLease(_ context.Context, key, holder string, limit int, lease time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.take(key, holder, limit, s.now().Add(lease)), nil
}

// RenewLease implements [Semaphores]; it never fails.
func (s *MemorySemaphores) RenewLease(_ context.Context, key, holder string, lease time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hs := s.live(key)
	if _, ok := hs[holder]; !ok {
		return false, nil
	}
	hs[holder] = s.now().Add(lease)
	return true, nil
}

// ReleaseLease implements [Semaphores]; it never fails.
func (s *MemorySemaphores) ReleaseLease(_ context.Context, key, holder string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.n[key], holder)
	s.live(key)
	return nil
}

// Held implements [Semaphores].
func (s *MemorySemaphores) Held(_ context.Context, key string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live(key)), nil
}

// Holders implements [Semaphores].
func (s *MemorySemaphores) Holders(_ context.Context, key string) ([]Holder, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Holder
	for id, until := range s.live(key) {
		out = append(out, Holder{ID: id, Expires: until})
	}
	return out, nil
}

// Reset implements [Semaphores].
func (s *MemorySemaphores) Reset(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.n, key)
	return nil
}
