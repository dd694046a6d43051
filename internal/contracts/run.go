package contracts

import "github.com/toolhost/toolhost/internal/toolerr"

// RunRequest is a tools.run-request@1 document.
type RunRequest struct {
	// Input is the tool's input document (a decoded JSON object).
	Input any `json:"input"`
	// Files reference existing files instead of uploading them.
	Files []FileReference `json:"files,omitempty"`
	// WaitMS is how long a job tool's run waits before answering 202; nil
	// lets the route choose.
	WaitMS *int64 `json:"wait_ms,omitempty"`
}

// FileReference names an existing file for the tool's file input Name:
// either a media object (Media) or a result file of the caller's own job
// (Job and File).
type FileReference struct {
	Name  string `json:"name"`
	Media string `json:"media,omitempty"`
	Job   string `json:"job,omitempty"`
	File  string `json:"file,omitempty"`
}

// RunStatus is the status of a run in tools.run@1.
type RunStatus string

// The run statuses. A finished run (succeeded, failed, cancelled) is
// answered 200; a queued or running one 202 with the job's Location.
const (
	RunSucceeded RunStatus = "succeeded"
	RunFailed    RunStatus = "failed"
	RunCancelled RunStatus = "cancelled"
	RunQueued    RunStatus = "queued"
	RunRunning   RunStatus = "running"
)

// Finished reports whether s is a final status.
func (s RunStatus) Finished() bool {
	return s == RunSucceeded || s == RunFailed || s == RunCancelled
}

// Run is a tools.run@1 document.
type Run struct {
	ID     string    `json:"id"`
	Tool   string    `json:"tool"`
	Status RunStatus `json:"status"`
	// Result is the result document of a succeeded run.
	Result any `json:"result,omitempty"`
	// Error is the error of a failed or cancelled run.
	Error *toolerr.Error `json:"error,omitempty"`
	// Job is set for a run that submitted a job.
	Job *JobLink `json:"job,omitempty"`
	// Files are the job's result files, exactly.
	Files []File `json:"files,omitempty"`
}

// JobLink names the job of a run.
type JobLink struct {
	ID       string `json:"id"`
	Location string `json:"location"`
}

// JobLocation returns the jobs API path of job id: /api/v1/jobs/{id}.
func JobLocation(id string) string { return "/api/v1/jobs/" + id }

// File is a result file as a run shows it.
type File struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	// Owner is the principal that owns the file: the job's owner, the
	// caller of the run.
	Owner string `json:"owner"`
	// Expires is an RFC 3339 time.
	Expires string `json:"expires"`
	Type    string `json:"type,omitempty"`
	Bytes   *int64 `json:"bytes,omitempty"`
	// Expired is true once the file has passed its expiry: its URL
	// answers 410.
	Expired bool `json:"expired,omitempty"`
}

// The problem codes of refusals before a tool runs, as
// tools.run-request@1 lists them ($defs/problemCode). Their HTTP statuses
// are the API's (internal/api, the problem+json dialect).
const (
	ProblemToolNotFound         = "tools.tool.not_found"
	ProblemToolNotRunnable      = "tools.tool.not_runnable"
	ProblemToolUnavailable      = "tools.tool.unavailable"
	ProblemInvalidRequest       = "tools.run.invalid_request"
	ProblemUnsupportedMediaType = "tools.run.unsupported_media_type"
	ProblemInvalidInput         = "tools.run.invalid_input"
	ProblemPayloadTooLarge      = "tools.run.payload_too_large"
	ProblemBodyTimeout          = "tools.run.body_timeout"
	ProblemFileType             = "tools.run.file_type"
	ProblemFileNotFound         = "tools.run.file_not_found"
	ProblemOverloaded           = "tools.run.overloaded"
	ProblemRunTimeout           = "tools.run.timeout"
	ProblemServerUnavailable    = "tools.server.unavailable"
	ProblemStoreBusy            = "tools.store.busy"
	ProblemStorageFull          = "tools.job.storage_full"
	ProblemUnauthenticated      = "tools.caller.unauthenticated"
	ProblemForbidden            = "tools.caller.forbidden"
	ProblemQuotaExceeded        = "tools.caller.quota_exceeded"
	ProblemConcurrencyExceeded  = "tools.caller.concurrency_exceeded"
	ProblemThrottled            = "tools.caller.throttled"
)
