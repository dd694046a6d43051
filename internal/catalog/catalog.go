// Package catalog projects a registry snapshot into the descriptors callers
// read: the seed-000 catalogue (version "2") and the descriptors of the
// process diagnostics ([Build], [Describe]), and ADR-027's tools.tool@1
// descriptors, tools.tool-list@1 and schema documents ([Tool], [List],
// [Schema]; docs/contracts.md). Both come from the same definitions. It
// only reads the snapshot; it never runs a tool.
package catalog

import (
	"slices"
	"strings"

	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// Version is the catalogue's contract version.
const Version = "2"

// Catalog is the seed-000 catalogue: the effective platform policy, one
// full descriptor per healthy service, and coarse summaries of the codes
// that are known but cannot run.
type Catalog struct {
	Version     string          `json:"version"`
	Policy      policy.Platform `json:"policy"`
	Items       []Descriptor    `json:"items"`
	Unavailable []Unavailable   `json:"unavailable"`
}

// Descriptor is one service as callers see it. Operations carry the
// effective (clamped) limits, the ones the executor enforces; they are not
// part of the schema fingerprint.
type Descriptor struct {
	ToolCode              string                  `json:"tool_code"`
	Name                  string                  `json:"name"`
	Description           string                  `json:"description"`
	NameI18nKey           *string                 `json:"name_i18n_key"`
	DescriptionI18nKey    *string                 `json:"description_i18n_key"`
	I18n                  map[string]tooldef.Text `json:"i18n"`
	Category              string                  `json:"category"`
	IconKey               string                  `json:"icon_key"`
	UI                    tooldef.UI              `json:"ui"`
	Documentation         tooldef.Documentation   `json:"documentation"`
	ContractVersion       string                  `json:"contract_version"`
	ImplementationVersion string                  `json:"implementation_version"`
	SchemaFingerprint     string                  `json:"schema_fingerprint"`
	Operations            []policy.Effective      `json:"operations"`
	// InputSchema and OutputSchema are the full schemas, local $defs and
	// references included.
	InputSchema  any `json:"input_schema"`
	OutputSchema any `json:"output_schema"`
}

// Unavailable is a coarse summary of a code that is known but cannot run:
// the catalogue says that it exists and why in one word, no more
// (diagnostics has the sanitised detail).
type Unavailable struct {
	ToolCode string `json:"tool_code"`
	// Reason is UnavailablePolicy, UnavailableRegistration,
	// UnavailableEngine or UnavailablePageOnly.
	Reason string `json:"reason"`
}

// The coarse unavailable reasons.
const (
	// UnavailablePolicy: an operation policy cannot be clamped to the
	// platform (invalid_operation_policy).
	UnavailablePolicy = "invalid_operation_policy"
	// UnavailableRegistration: the code's registration failed (a
	// duplicate, a module that did not load, a refused definition).
	UnavailableRegistration = "registration_failed"
	// UnavailableEngine: the native engine the service runs is missing on
	// this host.
	UnavailableEngine = "engine_missing"
	// UnavailablePageOnly: a page-only tool (ADR-027), which people use on
	// its page and no API runs.
	UnavailablePageOnly = "page_only"
)

// Build returns the catalogue of snapshot s under platform policy p.
func Build(p policy.Platform, s *registry.Snapshot) *Catalog {
	c := &Catalog{Version: Version, Policy: p, Items: []Descriptor{}, Unavailable: []Unavailable{}}
	listed := map[string]bool{}
	for _, svc := range s.Services() {
		listed[svc.Code()] = true
		if !svc.Definition.Platform.API {
			// A page-only tool: listed, never computed by the API.
			c.Unavailable = append(c.Unavailable, Unavailable{ToolCode: svc.Code(), Reason: UnavailablePageOnly})
			continue
		}
		if svc.Unavailable != nil {
			reason := UnavailableEngine
			if svc.Unavailable.Code == toolerr.InvalidOperationPolicy {
				reason = UnavailablePolicy
			}
			c.Unavailable = append(c.Unavailable, Unavailable{ToolCode: svc.Code(), Reason: reason})
			continue
		}
		c.Items = append(c.Items, Describe(svc, p))
	}
	for _, f := range s.Failures() {
		if f.ToolCode == "" || listed[f.ToolCode] {
			continue
		}
		listed[f.ToolCode] = true
		c.Unavailable = append(c.Unavailable, Unavailable{ToolCode: f.ToolCode, Reason: UnavailableRegistration})
	}
	slices.SortFunc(c.Unavailable, func(a, b Unavailable) int { return strings.Compare(a.ToolCode, b.ToolCode) })
	return c
}

// Describe returns the descriptor of svc under platform policy p. A
// service whose policy cannot be clamped (unavailable) has no effective
// policy: its operations show the policy it declared, defaults applied,
// with p's ingress, output and response reserves, never invented values.
func Describe(svc *registry.Service, p policy.Platform) Descriptor {
	d := svc.Definition
	ops := make([]policy.Effective, 0, len(d.Operations))
	for _, op := range d.Operations {
		eff, ok := svc.Effective[op.Policy.Name]
		if !ok {
			eff = declared(op.Policy, p)
		}
		ops = append(ops, eff)
	}
	return Descriptor{
		ToolCode:              d.ToolCode,
		Name:                  d.Name,
		Description:           d.Description,
		NameI18nKey:           d.NameI18nKey,
		DescriptionI18nKey:    d.DescriptionI18nKey,
		I18n:                  d.I18n,
		Category:              d.Category,
		IconKey:               d.IconKey,
		UI:                    d.UI,
		Documentation:         d.Documentation,
		ContractVersion:       d.ContractVersion,
		ImplementationVersion: d.ImplementationVersion,
		SchemaFingerprint:     d.Fingerprint,
		Operations:            ops,
		InputSchema:           d.InputSchema,
		OutputSchema:          d.OutputSchema,
	}
}

// declared is the operation policy op as declared, in the effective
// policy's shape, with p's reserves: what diagnostics shows of a service
// whose policy cannot be clamped.
func declared(op policy.Operation, p policy.Platform) policy.Effective {
	return policy.Effective{
		Name: op.Name, Pure: op.Pure, Deterministic: op.Deterministic, Deduplication: op.Deduplication,
		MaxParameterBytes: op.MaxParameterBytes, MaxResultBytes: op.MaxResultBytes,
		QueueTimeoutMS: op.QueueTimeoutMS, EngineTimeoutMS: op.EngineTimeoutMS, SoftTimeoutMS: op.SoftTimeoutMS,
		HardTimeoutMS: op.HardTimeoutMS, CleanupTimeoutMS: op.CleanupTimeoutMS, RequestTimeoutMS: op.RequestTimeoutMS,
		ClientTimeoutMS: op.ClientTimeoutMS, MemoryLimitBytes: op.MemoryLimitBytes,
		IngressTimeoutMS: p.IngressTimeoutMS, OutputReserveMS: p.OutputReserveMS, ResponseReserveMS: p.ResponseReserveMS,
	}
}
