package api

import "time"

// LoadingModule is one load of a module file in progress, as diagnostics
// lists it under "loading" (docs/http.md): what a tool author who just
// dropped a module sees until it is published or refused. It carries the
// file's name, never a path, like a failure.
type LoadingModule struct {
	// File is "NAME.wasm", the name a failure of the same file has.
	File string `json:"filename"`
	// Phase is queued (waiting for a load slot), read, instrument,
	// compile, image or describe.
	Phase string `json:"phase"`
	// Since is when the load began (UTC, milliseconds); ElapsedMS and
	// PhaseElapsedMS are the time since then and in the current phase,
	// when the document was made.
	Since          time.Time `json:"since"`
	ElapsedMS      int64     `json:"elapsed_ms"`
	PhaseElapsedMS int64     `json:"phase_elapsed_ms"`
	// PhaseTimeoutMS is the current phase's deadline, counted from its
	// start; absent while queued and once abandoned.
	PhaseTimeoutMS int64 `json:"phase_timeout_ms,omitempty"`
	// Abandoned is true once the loader gave the load up (refused at its
	// phase deadline — the refusal is in failures — or superseded by a
	// newer version of the file) while its work still runs and holds a
	// load slot: wazero's compiler cannot be interrupted.
	Abandoned bool `json:"abandoned"`
}

// ToolsCheck is /readyz's view of the tools folder: the loads in progress
// and the abandoned ones still holding a slot. Neither makes the process
// unready: it listens first and publishes modules as they load.
type ToolsCheck struct {
	Loading   int `json:"loading"`
	Abandoned int `json:"abandoned"`
}

// loading is the projection of the registry's loads in progress, never
// nil; now is when the document is made.
func (s *Server) loading(now time.Time) []LoadingModule {
	out := []LoadingModule{}
	if s.cfg.Loading == nil {
		return out
	}
	for _, l := range s.cfg.Loading() {
		out = append(out, LoadingModule{
			File:           l.File,
			Phase:          l.Phase,
			Since:          l.Since.UTC().Truncate(time.Millisecond),
			ElapsedMS:      max(now.Sub(l.Since), 0).Milliseconds(),
			PhaseElapsedMS: max(now.Sub(l.PhaseSince), 0).Milliseconds(),
			PhaseTimeoutMS: l.PhaseTimeout.Milliseconds(),
			Abandoned:      l.Abandoned,
		})
	}
	return out
}

// toolsCheck counts the loads in progress for /readyz; ok is false when
// the server was given no view of them.
func (s *Server) toolsCheck() (c ToolsCheck, ok bool) {
	if s.cfg.Loading == nil {
		return c, false
	}
	for _, l := range s.cfg.Loading() {
		if l.Abandoned {
			c.Abandoned++
		} else {
			c.Loading++
		}
	}
	return c, true
}
