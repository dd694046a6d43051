package jobs

// EventListenerPID is the backend process id of s's connection listening
// for other replicas' job events, 0 while it is not connected or on
// SQLite (tests end it with pg_terminate_backend).
func EventListenerPID(s *Service) uint32 {
	if s.bus == nil {
		return 0
	}
	return s.bus.listenerPID()
}
