package contractstest_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/testkit/contractstest"
)

// readJSON decodes a fixture strictly into v.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func codes(fs []contractstest.Finding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.Code)
	}
	return out
}

// Each rule of CheckDescriptor has a fixture that breaks it alone, made
// from one of the good fixtures by one change.
func TestCheckDescriptor(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string // finding codes; none for a good fixture
		path string   // the finding's path
		// schema: tools.tool@1 refuses the fixture too.
		schema bool
	}{
		{name: "client transform", file: "good.client_transform"},
		{name: "sync solver", file: "good.sync_solver"},
		{name: "job with files", file: "good.job_files"},
		{name: "page only", file: "good.page_only"},
		{name: "probe", file: "good.probe"},
		{name: "anonymous fetch with a throttle", file: "good.fetch_anonymous_throttled"},
		{name: "unavailable", file: "good.unavailable"},

		{name: "run without api", file: "bad.descriptor.run_without_api", want: []string{contractstest.FindingRunWithoutAPI}, path: "/run", schema: true},
		{name: "api without run", file: "bad.descriptor.run_missing", want: []string{contractstest.FindingRunMissing}, path: "/run", schema: true},
		{name: "endpoint of another tool", file: "bad.descriptor.run_endpoint", want: []string{contractstest.FindingRunEndpoint}, path: "/run/endpoint"},
		{name: "run by GET", file: "bad.descriptor.run_method", want: []string{contractstest.FindingRunMethod}, path: "/run/method", schema: true},
		{name: "api without input schema", file: "bad.descriptor.input_missing", want: []string{contractstest.FindingInputMissing}, path: "/input", schema: true},
		{name: "sync tool names a job", file: "bad.descriptor.job_not_job_tool", want: []string{contractstest.FindingJobNotJobTool}, path: "/run/job"},
		{name: "job tool without a job", file: "bad.descriptor.job_missing", want: []string{contractstest.FindingJobMissing}, path: "/run/job"},
		{name: "preset sets tool", file: "bad.descriptor.job_preset", want: []string{contractstest.FindingJobPreset}, path: "/run/job/preset/tool", schema: true},
		{name: "file output from a sync tool", file: "bad.descriptor.file_output_not_job", want: []string{contractstest.FindingFileOutputNotJob}, path: "/output/files"},
		{name: "anonymous egress without a throttle", file: "bad.descriptor.egress_unthrottled", want: []string{contractstest.FindingEgressUnthrottled}, path: "/limits/perTargetPerMinute"},
		{name: "anonymous probe", file: "bad.descriptor.probe_anonymous", want: []string{contractstest.FindingProbeAnonymous}, path: "/auth/anonymous"},
		{name: "probe without egress", file: "bad.descriptor.probe_not_egress", want: []string{contractstest.FindingProbeNotEgress}, path: "/egress"},
		{name: "probe class without the capability", file: "bad.descriptor.probe_capability", want: []string{contractstest.FindingProbeCapability}, path: "/auth/capability"},
		{name: "probe capability in another class", file: "bad.descriptor.probe_quota_class", want: []string{contractstest.FindingProbeQuotaClass}, path: "/quotaClass"},
		{name: "client tool fetches", file: "bad.descriptor.client_fetches", want: []string{contractstest.FindingClientFetches}, path: "/egress"},
		{name: "hosts without egress", file: "bad.descriptor.hosts_without_egress", want: []string{contractstest.FindingHostsWithoutEgress}, path: "/hosts"},
		{name: "tier word", file: "bad.descriptor.quota_class_tier", want: []string{contractstest.FindingQuotaClassTier}, path: "/quotaClass"},
		{name: "cost zero", file: "bad.descriptor.cost", want: []string{contractstest.FindingCost}, path: "/cost", schema: true},
		{name: "unavailable without a reason", file: "bad.descriptor.status_reason_missing", want: []string{contractstest.FindingStatusReasonMissing}, path: "/statusReason", schema: true},
		{name: "reason without unavailable", file: "bad.descriptor.status_reason_unexpected", want: []string{contractstest.FindingStatusReasonUnexpected}, path: "/statusReason", schema: true},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d contracts.Tool
			readJSON(t, filepath.Join("..", "..", "contracts", "testdata", "descriptors", tt.file+".json"), &d)
			fs := contractstest.CheckDescriptor(d)
			if got := codes(fs); !slices.Equal(got, append([]string{}, tt.want...)) {
				t.Fatalf("findings %v, want %v", fs, tt.want)
			}
			if len(fs) == 1 && fs[0].Path != tt.path {
				t.Errorf("finding path %q, want %q", fs[0].Path, tt.path)
			}
			for _, f := range fs {
				covered[f.Code] = true
				if f.Detail == "" {
					t.Errorf("%s has no detail", f.Code)
				}
			}
			err := contracts.Validate(contracts.ToolV1, d)
			switch {
			case len(tt.want) == 0 && err != nil:
				t.Errorf("a good fixture fails tools.tool@1: %v", err)
			case tt.schema && err == nil:
				t.Error("tools.tool@1 accepts the fixture")
			case len(tt.want) > 0 && !tt.schema && err != nil:
				t.Errorf("the fixture breaks tools.tool@1 as well as its rule: %v", err)
			}
		})
	}
	// Every descriptor rule has its fixture.
	for _, c := range descriptorFindings {
		if !covered[c] {
			t.Errorf("no fixture breaks %s", c)
		}
	}
}

var descriptorFindings = []string{
	contractstest.FindingRunWithoutAPI, contractstest.FindingRunMissing, contractstest.FindingRunEndpoint, contractstest.FindingRunMethod,
	contractstest.FindingInputMissing, contractstest.FindingJobNotJobTool, contractstest.FindingJobMissing, contractstest.FindingJobPreset,
	contractstest.FindingFileOutputNotJob, contractstest.FindingEgressUnthrottled, contractstest.FindingProbeAnonymous,
	contractstest.FindingProbeNotEgress, contractstest.FindingProbeCapability, contractstest.FindingProbeQuotaClass,
	contractstest.FindingClientFetches, contractstest.FindingHostsWithoutEgress, contractstest.FindingQuotaClassTier,
	contractstest.FindingCost, contractstest.FindingStatusReasonMissing, contractstest.FindingStatusReasonUnexpected,
}

func TestCheckList(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string
		path string
	}{
		{name: "every good descriptor", file: "good"},
		{name: "empty", file: "good.empty"},
		{name: "duplicate id", file: "bad.list.id_duplicate", want: []string{contractstest.FindingListIDDuplicate}, path: "/tools/1/id"},
		{name: "unsorted", file: "bad.list.unsorted", want: []string{contractstest.FindingListUnsorted}, path: "/tools/1/id"},
		{name: "count", file: "bad.list.count", want: []string{contractstest.FindingListCount}, path: "/count"},
		{name: "hosts not the union", file: "bad.list.hosts", want: []string{contractstest.FindingListHosts}, path: "/hosts"},
		{name: "embedded schema", file: "bad.list.schema_ref", want: []string{contractstest.FindingListSchemaRef}, path: "/tools/0/input"},
		{name: "reference to another tool", file: "bad.list.schema_ref.other_tool", want: []string{contractstest.FindingListSchemaRef}, path: "/tools/1/output/schema"},
		{name: "legacy route claimed twice", file: "bad.list.legacy_duplicate", want: []string{contractstest.FindingListLegacyDuplicate}, path: "/tools/3/run/legacy/0"},
		{name: "a descriptor's finding", file: "bad.descriptor.quota_class_tier", want: []string{contractstest.FindingQuotaClassTier}, path: "/tools/0/quotaClass"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l contracts.ToolList
			readJSON(t, filepath.Join("..", "..", "contracts", "testdata", "lists", tt.file+".json"), &l)
			fs := contractstest.CheckList(l)
			if got := codes(fs); !slices.Equal(got, append([]string{}, tt.want...)) {
				t.Fatalf("findings %v, want %v", fs, tt.want)
			}
			if len(fs) == 1 && fs[0].Path != tt.path {
				t.Errorf("finding path %q, want %q", fs[0].Path, tt.path)
			}
			err := contracts.Validate(contracts.ToolListV1, l)
			if len(tt.want) == 0 && err != nil {
				t.Errorf("a good list fails tools.tool-list@1: %v", err)
			}
			if tt.file == "bad.list.schema_ref" && err == nil {
				t.Error("tools.tool-list@1 accepts an embedded schema")
			}
		})
	}
}

func TestTierWord(t *testing.T) {
	for class, want := range map[string]string{
		"tools-run": "", "tools-job": "", "tools-fetch": "", "tools-probe": "", "tools-solve": "",
		"tools-mapping": "", "tools-approve": "", "tools-process": "",
		"tools-free": "free", "tools-pro": "pro", "premium-run": "premium", "tools-users": "user",
		"tools-app": "app", "tools-anonymous": "anonymous", "session-jobs": "session", "tools-paid-run": "paid",
		"tools-service": "service", "tools.user": "user",
	} {
		if got := contractstest.TierWord(class); got != want {
			t.Errorf("TierWord(%q) = %q, want %q", class, got, want)
		}
	}
}

func TestCheckRun(t *testing.T) {
	exp := "2026-12-01T10:00:00Z"
	jobFiles := []contracts.File{{Name: "out.pdf", URL: "/api/v1/jobs/j1/files/out.pdf", Owner: "alice", Expires: exp}}
	job := &contracts.JobLink{ID: "j1", Location: contracts.JobLocation("j1")}
	tests := []struct {
		name     string
		run      contracts.Run
		jobFiles []contracts.File
		want     []string
	}{
		{name: "sync run", run: contracts.Run{ID: "r1", Tool: "slug", Status: contracts.RunSucceeded, Result: map[string]any{"text": "a"}}},
		{name: "job run with the job's files", jobFiles: jobFiles, run: contracts.Run{ID: "j1", Tool: "pdf_protect", Status: contracts.RunSucceeded,
			Result: map[string]any{}, Job: job, Files: []contracts.File{{Name: "out.pdf", URL: "/signed?x=1", Owner: "alice", Expires: exp}}}},
		{name: "a file of another owner", jobFiles: jobFiles, run: contracts.Run{ID: "j1", Tool: "pdf_protect", Status: contracts.RunSucceeded,
			Result: map[string]any{}, Job: job, Files: []contracts.File{{Name: "out.pdf", URL: "/signed?x=1", Owner: "bob", Expires: exp}}},
			want: []string{contractstest.FindingRunFiles}},
		{name: "queued run", jobFiles: nil, run: contracts.Run{ID: "j1", Tool: "pdf_protect", Status: contracts.RunQueued, Job: job}},
		{name: "files without a job", run: contracts.Run{ID: "r1", Tool: "slug", Status: contracts.RunSucceeded, Result: map[string]any{},
			Files: jobFiles}, want: []string{contractstest.FindingRunFilesWithoutJob}},
		{name: "a file the job lacks", jobFiles: jobFiles, run: contracts.Run{ID: "j1", Tool: "pdf_protect", Status: contracts.RunSucceeded,
			Result: map[string]any{}, Job: job, Files: append(slices.Clone(jobFiles), contracts.File{Name: "x.pdf", URL: "/x", Owner: "alice", Expires: exp})},
			want: []string{contractstest.FindingRunFiles}},
		{name: "a job file the run lacks", jobFiles: jobFiles, run: contracts.Run{ID: "j1", Tool: "pdf_protect", Status: contracts.RunSucceeded,
			Result: map[string]any{}, Job: job}, want: []string{contractstest.FindingRunFiles}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := codes(contractstest.CheckRun(tt.run, tt.jobFiles)); !slices.Equal(got, append([]string{}, tt.want...)) {
				t.Errorf("findings %v, want %v", got, tt.want)
			}
			// tools.run@1 says the first rule too: files need a job.
			err := contracts.Validate(contracts.RunV1, tt.run)
			if refused := slices.Contains(tt.want, contractstest.FindingRunFilesWithoutJob); refused != (err != nil) {
				t.Errorf("tools.run@1: %v", err)
			}
		})
	}
}
