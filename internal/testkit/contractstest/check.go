// Package contractstest checks documents against the rules of ADR-027's
// acceptance tests beyond their schemas (a descriptor, the tool list, a
// run): test support, imported by _test.go files only.
package contractstest

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/tooldef"
)

// Finding is one broken rule of [CheckDescriptor], [CheckList] or
// [CheckRun]: a stable code, the JSON pointer of the offending member in
// the checked document, and the rule in words. It is the tool model's
// (tooldef.Finding), whose rules CheckDescriptor applies.
type Finding = tooldef.Finding

// The finding codes.
const (
	// FindingRunWithoutAPI: api is false but run is not null.
	FindingRunWithoutAPI = "descriptor.run_without_api"
	// FindingRunMissing: api is true but run is null.
	FindingRunMissing = "descriptor.run_missing"
	// FindingRunEndpoint: run.endpoint is not /api/v1/tools/{id}/run.
	FindingRunEndpoint = "descriptor.run_endpoint"
	// FindingRunMethod: run.method is not POST.
	FindingRunMethod = "descriptor.run_method"
	// FindingInputMissing: api is true but input is not a schema.
	FindingInputMissing = "descriptor.input_missing"

	// The rules on what a tool declares, the tool model's
	// (tooldef.CheckPlatform): see tooldef for each.
	FindingJobNotJobTool          = tooldef.FindingJobNotJobTool
	FindingJobMissing             = tooldef.FindingJobMissing
	FindingJobPreset              = tooldef.FindingJobPreset
	FindingFileOutputNotJob       = tooldef.FindingFileOutputNotJob
	FindingEgressUnthrottled      = tooldef.FindingEgressUnthrottled
	FindingProbeAnonymous         = tooldef.FindingProbeAnonymous
	FindingProbeNotEgress         = tooldef.FindingProbeNotEgress
	FindingProbeCapability        = tooldef.FindingProbeCapability
	FindingProbeQuotaClass        = tooldef.FindingProbeQuotaClass
	FindingClientFetches          = tooldef.FindingClientFetches
	FindingHostsWithoutEgress     = tooldef.FindingHostsWithoutEgress
	FindingQuotaClassTier         = tooldef.FindingQuotaClassTier
	FindingCost                   = tooldef.FindingCost
	FindingStatusReasonMissing    = tooldef.FindingStatusReasonMissing
	FindingStatusReasonUnexpected = tooldef.FindingStatusReasonUnexpected

	// FindingListIDDuplicate: two tools share an id.
	FindingListIDDuplicate = "list.id_duplicate"
	// FindingListUnsorted: the ids are not in ascending order.
	FindingListUnsorted = "list.unsorted"
	// FindingListCount: count is not the number of tools.
	FindingListCount = "list.count"
	// FindingListHosts: hosts is not the sorted union of the tools' hosts.
	FindingListHosts = "list.hosts"
	// FindingListSchemaRef: a listed schema is not the $ref to the tool's
	// own schema document.
	FindingListSchemaRef = "list.schema_ref"
	// FindingListLegacyDuplicate: two tools claim the same legacy route
	// (method, path and selector).
	FindingListLegacyDuplicate = "list.legacy_duplicate"

	// FindingRunFilesWithoutJob: a run shows files but no job.
	FindingRunFilesWithoutJob = "run.files_without_job"
	// FindingRunFiles: a run's files are not exactly its job's.
	FindingRunFiles = "run.files_not_job_files"
)

// TierWords are the words a quota class may not contain (tooldef's): the
// caller tiers and the words of prices and plans. A class names the work.
var TierWords = tooldef.TierWords

// TierWord returns the first tier word among the -, _ or . separated words
// of class (plurals included: "users" is "user"), or "".
func TierWord(class string) string { return tooldef.TierWord(class) }

// IsProbe reports whether t is a network probe: it needs tools.net.probe
// or counts against tools-probe.
func IsProbe(t *contracts.Tool) bool { return tooldef.IsProbe(capability(t), t.QuotaClass) }

// capability is the capability t needs, "" for none.
func capability(t *contracts.Tool) string {
	if t.Auth.Capability == nil {
		return ""
	}
	return *t.Auth.Capability
}

// CheckDescriptor applies the rules of ADR-027's acceptance tests that
// tools.tool@1's schema does not say to one descriptor, embedded or listed,
// and returns the broken ones in a fixed order (none: nil). It checks the
// descriptor's own shape —
//
//   - api false has no run; api true has a run on its own path
//     (/api/v1/tools/{id}/run, POST) and an input schema —
//
// then the rules on what the tool declares, which are the tool model's
// and which the registry applied when it accepted the declaration
// (tooldef.CheckPlatform, on the platform the descriptor shows):
//
//   - only job tools name a job, and a job tool in the API names one; its
//     preset does not set "tool";
//   - file output through the API comes from a job;
//   - an egress tool open to anonymous callers has
//     limits.perTargetPerMinute; a probe is never anonymous, says egress
//     true, needs tools.net.probe and counts against tools-probe;
//   - a client tool never fetches (egress false, no hosts), and a tool that
//     lists hosts says egress true;
//   - the quota class carries no tier word ([TierWords]); cost is at least 1;
//   - status unavailable has a statusReason, and only it.
func CheckDescriptor(t contracts.Tool) []Finding {
	var fs []Finding
	add := func(code, path, detail string) { fs = append(fs, Finding{Code: code, Path: path, Detail: detail}) }

	switch {
	case !t.API && t.Run != nil:
		add(FindingRunWithoutAPI, "/run", "a tool outside the API (api false) has run null")
	case t.API && t.Run == nil:
		add(FindingRunMissing, "/run", "a tool in the API (api true) has a run")
	}
	if t.API && !isSchema(t.Input) {
		add(FindingInputMissing, "/input", "a tool in the API has an input schema")
	}
	if r := t.Run; r != nil {
		if r.Endpoint != contracts.RunEndpoint(t.ID) {
			add(FindingRunEndpoint, "/run/endpoint", "the run endpoint is the tool's own path, /api/v1/tools/{id}/run")
		}
		if r.Method != "POST" {
			add(FindingRunMethod, "/run/method", "a run is a POST")
		}
	}
	return append(fs, tooldef.CheckPlatform(platform(&t), t.Run != nil)...)
}

// platform is the tool model's platform as descriptor t shows it.
func platform(t *contracts.Tool) tooldef.Platform {
	p := tooldef.Platform{
		Status:             t.Status,
		StatusReason:       t.StatusReason,
		Execution:          t.Execution,
		API:                t.API,
		Files:              t.Files,
		OutputFiles:        t.Output.Files,
		Anonymous:          t.Auth.Anonymous,
		Capability:         capability(t),
		QuotaClass:         t.QuotaClass,
		Cost:               t.Cost,
		Egress:             t.Egress,
		Hosts:              t.Hosts,
		PerTargetPerMinute: t.Limits.PerTargetPerMinute,
	}
	if t.Run != nil {
		p.Job, p.Legacy = t.Run.Job, t.Run.Legacy
	}
	return p
}

// isSchema reports whether v is a JSON Schema object that says something:
// a non-empty object (a contracts.Ref counts).
func isSchema(v any) bool {
	switch s := v.(type) {
	case map[string]any:
		return len(s) > 0
	case contracts.Ref:
		return s.Ref != ""
	case *contracts.Ref:
		return s != nil && s.Ref != ""
	}
	return false
}

// refOf returns the reference a listed schema holds, and whether it is
// only a reference.
func refOf(v any) (string, bool) {
	switch s := v.(type) {
	case contracts.Ref:
		return s.Ref, true
	case *contracts.Ref:
		if s != nil {
			return s.Ref, true
		}
	case map[string]any:
		r, ok := s["$ref"].(string)
		return r, ok && len(s) == 1
	}
	return "", false
}

// CheckList applies [CheckDescriptor] to every listed tool (paths under
// /tools/{i}) and the list's own rules: ids unique and ascending, count the
// number of tools, hosts the sorted union of the tools' hosts, each schema
// the $ref to the tool's own schema document, and no legacy route claimed
// by two tools. Findings come in a fixed order; none is nil.
func CheckList(l contracts.ToolList) []Finding {
	var fs []Finding
	add := func(code, path, detail string) { fs = append(fs, Finding{Code: code, Path: path, Detail: detail}) }
	seen := map[string]bool{}
	type routeKey struct{ method, path, selector string }
	routes := map[routeKey]bool{}
	union := map[string]bool{}
	for i, t := range l.Tools {
		at := fmt.Sprintf("/tools/%d", i)
		for _, f := range CheckDescriptor(t) {
			add(f.Code, at+f.Path, f.Detail)
		}
		if seen[t.ID] {
			add(FindingListIDDuplicate, at+"/id", "ids are unique")
		} else if i > 0 && t.ID < l.Tools[i-1].ID {
			add(FindingListUnsorted, at+"/id", "tools are sorted by id")
		}
		seen[t.ID] = true
		if r, ok := refOf(t.Input); !ok || r != contracts.SchemaRef(t.ID, contracts.SchemaInput).Ref {
			add(FindingListSchemaRef, at+"/input", "a listed input is the $ref "+contracts.SchemaRef(t.ID, contracts.SchemaInput).Ref)
		}
		if r, ok := refOf(t.Output.Schema); !ok || r != contracts.SchemaRef(t.ID, contracts.SchemaOutput).Ref {
			add(FindingListSchemaRef, at+"/output/schema", "a listed output is the $ref "+contracts.SchemaRef(t.ID, contracts.SchemaOutput).Ref)
		}
		if t.Run != nil {
			for j, lr := range t.Run.Legacy {
				k := routeKey{lr.Method, lr.Path, lr.Selector}
				if routes[k] {
					add(FindingListLegacyDuplicate, fmt.Sprintf("%s/run/legacy/%d", at, j), "a legacy route reaches one tool")
				}
				routes[k] = true
			}
		}
		for _, h := range t.Hosts {
			union[h] = true
		}
	}
	if l.Count != len(l.Tools) {
		add(FindingListCount, "/count", "count is the number of tools")
	}
	want := make([]string, 0, len(union))
	for h := range union {
		want = append(want, h)
	}
	slices.Sort(want)
	if !slices.Equal(l.Hosts, want) {
		add(FindingListHosts, "/hosts", "hosts is the sorted union of the tools' hosts")
	}
	return fs
}

// CheckRun applies the run rules of ADR-027's acceptance tests to a
// tools.run@1 document: a run that shows files names its job, and its files
// are exactly the job's — jobFiles, the files of the job r names as the
// jobs API shows them (nil when r names none) — compared by name, owner
// and expiry, in any order (a signed download URL may be signed anew for each
// answer).
func CheckRun(r contracts.Run, jobFiles []contracts.File) []Finding {
	var fs []Finding
	if len(r.Files) > 0 && r.Job == nil {
		fs = append(fs, Finding{Code: FindingRunFilesWithoutJob, Path: "/files", Detail: "file output through the API comes from a job"})
	}
	if r.Job != nil && r.Status.Finished() {
		key := func(f contracts.File) string { return f.Name + "\x00" + f.Owner + "\x00" + f.Expires }
		got := make([]string, len(r.Files))
		for i, f := range r.Files {
			got[i] = key(f)
		}
		want := make([]string, len(jobFiles))
		for i, f := range jobFiles {
			want[i] = key(f)
		}
		slices.SortFunc(got, cmp.Compare)
		slices.SortFunc(want, cmp.Compare)
		if !slices.Equal(got, want) {
			fs = append(fs, Finding{Code: FindingRunFiles, Path: "/files", Detail: "a run's result files are exactly its job's"})
		}
	}
	return fs
}
