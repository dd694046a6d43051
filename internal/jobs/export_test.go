package jobs

import "iter"

// Uploads returns the uploads as the sequence Submission.Files takes.
func Uploads(uploads ...Upload) iter.Seq2[Upload, error] {
	return func(yield func(Upload, error) bool) {
		for _, u := range uploads {
			if !yield(u, nil) {
				return
			}
		}
	}
}

// EventListenerPID is the backend process id of s's connection listening
// for other replicas' job events, 0 while it is not connected or on
// SQLite (tests end it with pg_terminate_backend).
func EventListenerPID(s *Service) uint32 {
	if s.bus == nil {
		return 0
	}
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	return s.bus.pid
}
