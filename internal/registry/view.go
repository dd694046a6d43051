// The runtime view of a published service: what the application layer
// reads to decide a run (availability, the platform fields, the compiled
// input schema), so that no request builds a public descriptor to decide
// anything, and the job-tool index of a snapshot.

package registry

import (
	"strings"
	"sync"

	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/tooldef"
)

// inputSchema is a service's compiled input schema, made once.
type inputSchema struct {
	once sync.Once
	v    *schema.Validator
	err  error
}

// Platform returns the service's platform fields (ADR-027) as declared;
// [Service.Available] and [Service.StatusReason] say whether it can run.
func (s *Service) Platform() *tooldef.Platform { return &s.Definition.Platform }

// Available reports whether the service can run here: the registry did
// not publish it unavailable, it has a runner, and it does not declare
// itself unavailable. It is the catalogue's status; a page-only tool is
// available to the page, not to the run API (its platform's API).
func (s *Service) Available() bool {
	return s.Unavailable == nil && s.Runner != nil && s.Definition.Platform.Status != tooldef.StatusUnavailable
}

// StatusReason is the statusReason of a service published unavailable:
// its platform code, followed for a missing engine by the engines, e.g.
// "engine_missing: qpdf, pdftoppm" or "invalid_operation_policy"; the
// declared reason of a tool that declares itself unavailable; "" for an
// available service. It carries no caller data: issue paths are engine
// names the package declared.
func (s *Service) StatusReason() string {
	e := s.Unavailable
	if e == nil {
		return s.Definition.Platform.StatusReason
	}
	var engines []string
	for _, is := range e.Issues {
		if is.Code == IssueEngineMissing && len(is.Path) > 0 {
			engines = append(engines, is.Path[0])
		}
	}
	if len(engines) > 0 {
		return IssueEngineMissing + ": " + strings.Join(engines, ", ")
	}
	return string(e.Code)
}

// InputValidator returns the service's compiled input schema, compiled
// once — when the first snapshot that publishes the service is made — and
// shared by every snapshot that publishes it. The error is the schema's
// compile error, which the registry's checks make unexpected.
func (s *Service) InputValidator() (*schema.Validator, error) {
	s.input.once.Do(func() { s.input.v, s.input.err = schema.Compile(s.Definition.InputSchema) })
	return s.input.v, s.input.err
}

// jobKey identifies a job tool by its run.job type and operation.
type jobKey struct{ typ, operation string }

// indexJobTools returns the job tools of services (sorted by code) by
// their run.job type and operation: the first by code wins, as a search
// in code order would find it.
func indexJobTools(services []*Service) map[jobKey]*Service {
	idx := map[jobKey]*Service{}
	for _, svc := range services {
		p := &svc.Definition.Platform
		if p.Job == nil || !p.API {
			continue
		}
		k := jobKey{p.Job.Type, p.Job.Operation}
		if _, ok := idx[k]; !ok {
			idx[k] = svc
		}
	}
	return idx
}

// JobTool returns the tool that runs jobs of jobType whose input names
// operation under "tool": the service whose run.job is {jobType,
// operation}.
func (s *Snapshot) JobTool(jobType, operation string) (*Service, bool) {
	svc, ok := s.jobTools[jobKey{jobType, operation}]
	return svc, ok
}

// Quarantined returns the registration failure of a code no service of the
// snapshot publishes: a code quarantined as a duplicate or refused with an
// invalid definition, which the catalogue lists as unavailable.
func (s *Snapshot) Quarantined(code string) (Failure, bool) {
	if _, ok := s.Service(code); ok || code == "" {
		return Failure{}, false
	}
	for _, f := range s.failures {
		if f.ToolCode == code {
			return f, true
		}
	}
	return Failure{}, false
}

// JobTypes returns the job types the tools of the snapshot declare, each
// once, in the order of their tools.
func (s *Snapshot) JobTypes() []string {
	var types []string
	seen := map[string]bool{}
	for _, svc := range s.services {
		if j := svc.Definition.Platform.Job; j != nil && !seen[j.Type] {
			seen[j.Type] = true
			types = append(types, j.Type)
		}
	}
	return types
}
