package tooldef

import (
	"fmt"
	"strings"
)

// Finding is one broken rule: a stable code, the JSON pointer of the
// offending member in the checked document, and the rule in words. The
// findings of [CheckPlatform] point into the tools.tool@1 descriptor the
// platform projects to, so that contractstest.CheckDescriptor reports them as
// they are.
type Finding struct {
	Code   string `json:"code"`
	Path   string `json:"path"`
	Detail string `json:"detail"`
}

func (f Finding) String() string { return f.Code + " at " + f.Path }

// The codes of [CheckPlatform]'s findings. Package contracts re-exports
// them beside the rules only a descriptor can break (its run route's
// shape, its input schema).
const (
	// FindingJobNotJobTool: a job is named by a tool whose execution is
	// not job.
	FindingJobNotJobTool = "descriptor.job_not_job_tool"
	// FindingJobMissing: a job tool in the API names no job.
	FindingJobMissing = "descriptor.job_missing"
	// FindingJobPreset: the job's preset holds "tool", which is the
	// operation's.
	FindingJobPreset = "descriptor.job_preset"
	// FindingFileOutputNotJob: a tool in the API produces files but is not
	// a job tool.
	FindingFileOutputNotJob = "descriptor.file_output_not_job"
	// FindingEgressUnthrottled: an egress tool open to anonymous callers
	// has no per-target throttle.
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

// IsProbe reports whether a tool that needs capability ("" for none) and
// counts against quotaClass is a network probe: it needs tools.net.probe
// or counts against tools-probe.
func IsProbe(capability, quotaClass string) bool {
	return capability == CapabilityProbe || quotaClass == QuotaClassProbe
}

// CheckPlatform applies to p the rules of ADR-027's acceptance tests on
// what a tool declares, and returns the broken ones in a fixed order
// (none: nil):
//
//   - only job tools name a job, and a job tool in the API names one; its
//     preset does not set "tool" (checked when routed: the tool has a run
//     route);
//   - file output through the API comes from a job;
//   - an egress tool open to anonymous callers has a per-target throttle;
//     a probe is never anonymous, says egress true, needs tools.net.probe
//     and counts against tools-probe;
//   - a client tool never fetches (egress false, no hosts), and a tool that
//     lists hosts says egress true;
//   - the quota class carries no tier word ([TierWords]); cost is at least 1;
//   - status unavailable has a status reason, and only it.
//
// routed is p.API for a decoded platform, whose run route exists exactly
// in the API. contractstest.CheckDescriptor passes whether the descriptor has
// a run, which a broken descriptor may have without api (it reports that
// itself, with the rules on the route's own shape).
func CheckPlatform(p Platform, routed bool) []Finding {
	var fs []Finding
	add := func(code, path, detail string) { fs = append(fs, Finding{Code: code, Path: path, Detail: detail}) }

	if routed {
		switch {
		case p.Job != nil && p.Execution != ExecutionJob:
			add(FindingJobNotJobTool, "/run/job", "only job tools name a job")
		case p.Job == nil && p.Execution == ExecutionJob:
			add(FindingJobMissing, "/run/job", "a job tool in the API names the job its run submits")
		}
		if p.Job != nil {
			if _, ok := p.Job.Preset["tool"]; ok {
				add(FindingJobPreset, "/run/job/preset/tool", "the job input's tool is the operation: a preset cannot set it")
			}
		}
	}
	if p.API && p.OutputFiles && p.Execution != ExecutionJob {
		add(FindingFileOutputNotJob, "/output/files", "file output through the API comes from a job")
	}
	if p.Egress && p.Anonymous && p.PerTargetPerMinute <= 0 {
		add(FindingEgressUnthrottled, "/limits/perTargetPerMinute", "an egress tool open to anonymous callers has a per-target throttle")
	}
	if IsProbe(p.Capability, p.QuotaClass) {
		if p.Anonymous {
			add(FindingProbeAnonymous, "/auth/anonymous", "a probe is never anonymous")
		}
		if !p.Egress {
			add(FindingProbeNotEgress, "/egress", "a probe sends traffic: egress true")
		}
		if p.Capability != CapabilityProbe {
			add(FindingProbeCapability, "/auth/capability", "a probe needs "+CapabilityProbe)
		}
		if p.QuotaClass != QuotaClassProbe {
			add(FindingProbeQuotaClass, "/quotaClass", "a probe counts against "+QuotaClassProbe)
		}
	}
	switch {
	case p.Execution == ExecutionClient && p.Egress:
		add(FindingClientFetches, "/egress", "a client tool never fetches: egress false")
	case p.Execution == ExecutionClient && len(p.Hosts) > 0:
		add(FindingClientFetches, "/hosts", "a client tool never fetches: no hosts")
	case !p.Egress && len(p.Hosts) > 0:
		add(FindingHostsWithoutEgress, "/hosts", "a tool that contacts hosts says egress true")
	}
	if w := TierWord(p.QuotaClass); w != "" {
		add(FindingQuotaClassTier, "/quotaClass", fmt.Sprintf("a quota class names the work, never a tier or a price (%q)", w))
	}
	if p.Cost < 1 {
		add(FindingCost, "/cost", "a run costs at least 1")
	}
	switch {
	case p.Status == StatusUnavailable && p.StatusReason == "":
		add(FindingStatusReasonMissing, "/statusReason", "an unavailable tool says why")
	case p.Status != StatusUnavailable && p.StatusReason != "":
		add(FindingStatusReasonUnexpected, "/statusReason", "only an unavailable tool has a status reason")
	}
	return fs
}
