package contracts

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Finding is one broken rule of [CheckDescriptor], [CheckList] or
// [CheckRun]: a stable code, the JSON pointer of the offending member in
// the checked document, and the rule in words.
type Finding struct {
	Code   string `json:"code"`
	Path   string `json:"path"`
	Detail string `json:"detail"`
}

func (f Finding) String() string { return f.Code + " at " + f.Path }

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
	// FindingJobNotJobTool: run.job is set on a tool whose execution is
	// not job.
	FindingJobNotJobTool = "descriptor.job_not_job_tool"
	// FindingJobMissing: a job tool in the API names no job.
	FindingJobMissing = "descriptor.job_missing"
	// FindingJobPreset: run.job.preset holds "tool", which is the
	// operation's.
	FindingJobPreset = "descriptor.job_preset"
	// FindingFileOutputNotJob: a tool in the API produces files but is not
	// a job tool.
	FindingFileOutputNotJob = "descriptor.file_output_not_job"
	// FindingEgressUnthrottled: an egress tool open to anonymous callers
	// has no limits.perTargetPerMinute.
	FindingEgressUnthrottled = "descriptor.egress_unthrottled"
	// FindingProbeAnonymous: a probe accepts anonymous callers.
	FindingProbeAnonymous = "descriptor.probe_anonymous"
	// FindingProbeNotEgress: a probe does not say egress true.
	FindingProbeNotEgress = "descriptor.probe_not_egress"
	// FindingProbeCapability: a probe (quota class tools-probe) does not
	// need tools.net.probe.
	FindingProbeCapability = "descriptor.probe_capability"
	// FindingProbeQuotaClass: a probe (capability tools.net.probe) does
	// not count against tools-probe.
	FindingProbeQuotaClass = "descriptor.probe_quota_class"
	// FindingClientFetches: a client tool says egress true or lists hosts.
	FindingClientFetches = "descriptor.client_fetches"
	// FindingHostsWithoutEgress: a tool lists hosts but says egress false.
	FindingHostsWithoutEgress = "descriptor.hosts_without_egress"
	// FindingQuotaClassTier: the quota class names a tier or a price.
	FindingQuotaClassTier = "descriptor.quota_class_tier"
	// FindingCost: cost is below 1.
	FindingCost = "descriptor.cost"
	// FindingStatusReasonMissing: status is unavailable without a reason.
	FindingStatusReasonMissing = "descriptor.status_reason_missing"
	// FindingStatusReasonUnexpected: a reason on a status other than
	// unavailable.
	FindingStatusReasonUnexpected = "descriptor.status_reason_unexpected"

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

// TierWords are the words a quota class may not contain: the caller tiers
// and the words of prices and plans. A class names the work.
var TierWords = []string{
	"anonymous", "anon", "guest", "session", "user", "app", "service", "partner", "sandbox", "staff",
	"free", "pro", "premium", "paid", "plus", "basic", "standard", "enterprise", "business",
	"team", "trial", "tier", "plan", "gold", "silver", "bronze", "vip",
}

// TierWord returns the first tier word among the -, _ or . separated words
// of class (plurals included: "users" is "user"), or "".
func TierWord(class string) string {
	words := strings.FieldsFunc(strings.ToLower(class), func(r rune) bool { return r == '-' || r == '_' || r == '.' })
	for _, w := range words {
		for _, t := range TierWords {
			if w == t || w == t+"s" {
				return t
			}
		}
	}
	return ""
}

// IsProbe reports whether t is a network probe: it needs tools.net.probe
// or counts against tools-probe.
func IsProbe(t *Tool) bool {
	return (t.Auth.Capability != nil && *t.Auth.Capability == CapabilityProbe) || t.QuotaClass == QuotaClassProbe
}

// CheckDescriptor applies the rules of ADR-027's acceptance tests that
// tools.tool@1's schema does not say to one descriptor, embedded or listed,
// and returns the broken ones in a fixed order (none: nil):
//
//   - api false has no run; api true has a run on its own path
//     (/api/v1/tools/{id}/run, POST) and an input schema;
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
func CheckDescriptor(t Tool) []Finding {
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
		if r.Endpoint != RunEndpoint(t.ID) {
			add(FindingRunEndpoint, "/run/endpoint", "the run endpoint is the tool's own path, /api/v1/tools/{id}/run")
		}
		if r.Method != "POST" {
			add(FindingRunMethod, "/run/method", "a run is a POST")
		}
		switch {
		case r.Job != nil && t.Execution != ExecutionJob:
			add(FindingJobNotJobTool, "/run/job", "only job tools name a job")
		case r.Job == nil && t.Execution == ExecutionJob:
			add(FindingJobMissing, "/run/job", "a job tool in the API names the job its run submits")
		}
		if r.Job != nil {
			if _, ok := r.Job.Preset["tool"]; ok {
				add(FindingJobPreset, "/run/job/preset/tool", "the job input's tool is the operation: a preset cannot set it")
			}
		}
	}
	if t.API && t.Output.Files && t.Execution != ExecutionJob {
		add(FindingFileOutputNotJob, "/output/files", "file output through the API comes from a job")
	}
	if t.Egress && t.Auth.Anonymous && t.Limits.PerTargetPerMinute <= 0 {
		add(FindingEgressUnthrottled, "/limits/perTargetPerMinute", "an egress tool open to anonymous callers has a per-target throttle")
	}
	if IsProbe(&t) {
		if t.Auth.Anonymous {
			add(FindingProbeAnonymous, "/auth/anonymous", "a probe is never anonymous")
		}
		if !t.Egress {
			add(FindingProbeNotEgress, "/egress", "a probe sends traffic: egress true")
		}
		if t.Auth.Capability == nil || *t.Auth.Capability != CapabilityProbe {
			add(FindingProbeCapability, "/auth/capability", "a probe needs "+CapabilityProbe)
		}
		if t.QuotaClass != QuotaClassProbe {
			add(FindingProbeQuotaClass, "/quotaClass", "a probe counts against "+QuotaClassProbe)
		}
	}
	switch {
	case t.Execution == ExecutionClient && t.Egress:
		add(FindingClientFetches, "/egress", "a client tool never fetches: egress false")
	case t.Execution == ExecutionClient && len(t.Hosts) > 0:
		add(FindingClientFetches, "/hosts", "a client tool never fetches: no hosts")
	case !t.Egress && len(t.Hosts) > 0:
		add(FindingHostsWithoutEgress, "/hosts", "a tool that contacts hosts says egress true")
	}
	if w := TierWord(t.QuotaClass); w != "" {
		add(FindingQuotaClassTier, "/quotaClass", fmt.Sprintf("a quota class names the work, never a tier or a price (%q)", w))
	}
	if t.Cost < 1 {
		add(FindingCost, "/cost", "a run costs at least 1")
	}
	switch {
	case t.Status == StatusUnavailable && t.StatusReason == "":
		add(FindingStatusReasonMissing, "/statusReason", "an unavailable tool says why")
	case t.Status != StatusUnavailable && t.StatusReason != "":
		add(FindingStatusReasonUnexpected, "/statusReason", "only an unavailable tool has a status reason")
	}
	return fs
}

// isSchema reports whether v is a JSON Schema object that says something:
// a non-empty object (a Ref counts).
func isSchema(v any) bool {
	switch s := v.(type) {
	case map[string]any:
		return len(s) > 0
	case Ref:
		return s.Ref != ""
	case *Ref:
		return s != nil && s.Ref != ""
	}
	return false
}

// refOf returns the reference a listed schema holds, and whether it is
// only a reference.
func refOf(v any) (string, bool) {
	switch s := v.(type) {
	case Ref:
		return s.Ref, true
	case *Ref:
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
func CheckList(l ToolList) []Finding {
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
		if r, ok := refOf(t.Input); !ok || r != SchemaRef(t.ID, SchemaInput).Ref {
			add(FindingListSchemaRef, at+"/input", "a listed input is the $ref "+SchemaRef(t.ID, SchemaInput).Ref)
		}
		if r, ok := refOf(t.Output.Schema); !ok || r != SchemaRef(t.ID, SchemaOutput).Ref {
			add(FindingListSchemaRef, at+"/output/schema", "a listed output is the $ref "+SchemaRef(t.ID, SchemaOutput).Ref)
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
// jobs API shows them (nil when r names none) — compared by name and
// expiry, in any order (a signed download URL may be signed anew for each
// answer).
func CheckRun(r Run, jobFiles []File) []Finding {
	var fs []Finding
	if len(r.Files) > 0 && r.Job == nil {
		fs = append(fs, Finding{Code: FindingRunFilesWithoutJob, Path: "/files", Detail: "file output through the API comes from a job"})
	}
	if r.Job != nil && r.Status.Finished() {
		key := func(f File) string { return f.Name + "\x00" + f.Expires }
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
