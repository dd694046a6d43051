package jobs

import (
	"context"
	"time"
)

// SlotKeeper keeps the concurrency slots of jobs (Submission.Slots) in
// the shared store they were taken from: the guard's semaphores, in
// process or in Redis. The jobs subsystem calls it; it never decodes the
// slots itself.
type SlotKeeper interface {
	// RenewSlots extends slots' leases, from the process that runs the
	// job. A slot that lapsed is not taken again.
	RenewSlots(ctx context.Context, slots string) error
	// ReleaseSlots frees slots. Freeing slots no longer held is no error.
	ReleaseSlots(ctx context.Context, slots string) error
}

// DefaultSlotRenewal is Config.SlotRenewal: a third of the guard's job
// slot lease (two minutes), so that two renewals may fail before a
// running job's slot lapses.
const DefaultSlotRenewal = 40 * time.Second

// slotTimeout bounds one renewal or release: the keeper's own bound
// (Redis's, a second) is shorter; this one keeps a stuck keeper from
// holding a run's end.
const slotTimeout = 5 * time.Second

// releaseSlots frees slots through Config.Slots. A keeper that does not
// answer is logged: the slots lapse at the end of their lease, which
// nobody renews any more.
func (s *Service) releaseSlots(slots string) {
	if s.cfg.Slots == nil || slots == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), slotTimeout)
	defer cancel()
	if err := s.cfg.Slots.ReleaseSlots(ctx, slots); err != nil {
		s.log.Warn("jobs: releasing a finished job's concurrency slots (they lapse with their lease)", "error", err)
	}
}

// holdSlots renews a running job's slots every Config.SlotRenewal until
// the returned func is called (when its handler returns). A renewal that
// fails is logged and tried again at the next tick.
func (s *Service) holdSlots(id, slots string) (stop func()) {
	if s.cfg.Slots == nil || slots == "" {
		return func() {}
	}
	return every(s.cfg.SlotRenewal, func() {
		ctx, cancel := context.WithTimeout(context.Background(), slotTimeout)
		defer cancel()
		if err := s.cfg.Slots.RenewSlots(ctx, slots); err != nil {
			s.log.Warn("jobs: renewing a running job's concurrency slots", "job", id, "error", err)
		}
	})
}
