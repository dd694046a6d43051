package catalog

import (
	"maps"
	"slices"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/schema"
)

// Tool returns the tools.tool@1 descriptor of svc with its schemas
// embedded, as GET /api/v1/tools/{id} answers it. Every field comes from
// the service's own declaration (its platform block, defaults filled) and
// its effective policies, except the status of a service the registry
// published unavailable: it is "unavailable", with the reason from
// [StatusReason]. Its schemas are the definition's without their
// discriminator keywords (OpenAPI's, not JSON Schema's: discriminator.go).
// The descriptor shares the definition's schemas and preset: callers must
// not modify them.
func Tool(svc *registry.Service) contracts.Tool {
	d := svc.Definition
	p := d.Platform
	t := contracts.Tool{
		ID:           d.ToolCode,
		Family:       d.Category,
		Name:         d.Name,
		Summary:      d.Description,
		Status:       p.Status,
		StatusReason: p.StatusReason,
		Execution:    p.Execution,
		API:          p.API,
		Input:        apiInput(svc, withoutDiscriminator(d.InputSchema)),
		Files:        slices.Clone(p.Files),
		Output:       contracts.Output{Schema: withoutDiscriminator(d.OutputSchema), Files: p.OutputFiles},
		Limits:       contracts.Limits{Operations: []contracts.OperationLimits{}, PerTargetPerMinute: p.PerTargetPerMinute},
		Auth:         contracts.Auth{Anonymous: p.Anonymous},
		QuotaClass:   p.QuotaClass,
		Cost:         p.Cost,
		Egress:       p.Egress,
		Hosts:        slices.Clone(p.Hosts),
		Docs:         contracts.Docs{Path: d.Documentation.Path, Version: d.Documentation.Version},
	}
	if t.Files == nil {
		t.Files = []contracts.FileInput{}
	}
	if t.Hosts == nil {
		t.Hosts = []string{}
	}
	if svc.Unavailable != nil {
		t.Status = contracts.StatusUnavailable
		t.StatusReason = svc.StatusReason()
	}
	if p.Capability != "" {
		capability := p.Capability
		t.Auth.Capability = &capability
	}
	if p.API {
		t.Run = &contracts.RunRoute{
			Endpoint: contracts.RunEndpoint(d.ToolCode),
			Method:   "POST",
			Legacy:   slices.Clone(p.Legacy),
		}
		if t.Run.Legacy == nil {
			t.Run.Legacy = []contracts.LegacyRoute{}
		}
		if j := p.Job; j != nil {
			preset := j.Preset
			if preset == nil {
				preset = map[string]any{}
			}
			t.Run.Job = &contracts.RunJob{Type: j.Type, Operation: j.Operation, Preset: preset}
		}
	}
	// Operations keep their declared order; a service whose policy cannot
	// be clamped has no effective limits and lists none.
	for _, name := range d.OperationNames() {
		e, ok := svc.Effective[name]
		if !ok {
			continue
		}
		t.Limits.Operations = append(t.Limits.Operations, contracts.OperationLimits{
			Operation:         e.Name,
			MaxParameterBytes: e.MaxParameterBytes,
			MaxResultBytes:    e.MaxResultBytes,
			QueueTimeoutMS:    e.QueueTimeoutMS,
			HardTimeoutMS:     e.HardTimeoutMS,
			RequestTimeoutMS:  e.RequestTimeoutMS,
			ClientTimeoutMS:   e.ClientTimeoutMS,
			MemoryLimitBytes:  e.MemoryLimitBytes,
		})
	}
	return t
}

// List returns the tools.tool-list@1 of snapshot s, as GET /api/v1/tools
// answers it: every published service's descriptor, sorted by id, with its
// schemas as $refs to its schema document ([Schema]); the count; the sorted
// union of the tools' hosts. A code whose registration failed has no
// definition and is not listed (diagnostics has it).
func List(s *registry.Snapshot) contracts.ToolList {
	services := s.Services()
	l := contracts.ToolList{Tools: make([]contracts.Tool, 0, len(services)), Hosts: []string{}}
	hosts := map[string]bool{}
	for _, svc := range services {
		t := Tool(svc)
		t.Input = contracts.SchemaRef(t.ID, contracts.SchemaInput)
		t.Output.Schema = contracts.SchemaRef(t.ID, contracts.SchemaOutput)
		for _, h := range t.Hosts {
			hosts[h] = true
		}
		l.Tools = append(l.Tools, t)
	}
	l.Count = len(l.Tools)
	l.Hosts = append(l.Hosts, slices.Sorted(maps.Keys(hosts))...)
	return l
}

// SchemaDocument is the answer of GET /api/v1/tools/{id}/schema, the
// target of a list's $refs: the tool's input and output schemas under
// $defs. Each keeps its own $defs and local references and gets an $id of
// its own, which makes it an embedded resource (JSON Schema 2020-12,
// compound documents): its "#/$defs/…" references resolve inside it.
type SchemaDocument struct {
	Schema string         `json:"$schema"`
	ID     string         `json:"$id"`
	Defs   map[string]any `json:"$defs"`
}

// Schema returns the schema document of svc. Its $id is the document's
// own path; the embedded schemas' are that path followed by /input and
// /output. The embedded schemas are shallow copies of the definition's:
// callers must not modify them.
func Schema(svc *registry.Service) SchemaDocument {
	d := svc.Definition
	id := contracts.SchemaEndpoint(d.ToolCode)
	return SchemaDocument{
		Schema: schema.Dialect,
		ID:     id,
		Defs: map[string]any{
			contracts.SchemaInput:  embedded(apiInput(svc, withoutDiscriminator(d.InputSchema)), id+"/"+contracts.SchemaInput),
			contracts.SchemaOutput: embedded(withoutDiscriminator(d.OutputSchema), id+"/"+contracts.SchemaOutput),
		},
	}
}

// embedded returns a shallow copy of schema s with $id set to id. A schema
// that is not an object (the profile rules that out) is returned as it is.
func embedded(s any, id string) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	out := maps.Clone(m)
	out["$id"] = id
	return out
}
