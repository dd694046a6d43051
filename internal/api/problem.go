package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"toolhost/internal/toolerr"
)

// ProblemType is the base of every problem document's type URI; the code
// follows it.
const ProblemType = "https://toolhost.dev/problems/"

// Problem is an RFC 9457 problem document with the stable code callers
// branch on, and the sanitised issues of an invalid envelope.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	Code   string `json:"code"`
	// Retryable is set where the refusal is worth retrying (429, 503 from
	// the executor).
	Retryable  *bool           `json:"retryable,omitempty"`
	Issues     []toolerr.Issue `json:"issues,omitempty"`
	IssueCount int             `json:"issue_count,omitempty"`
	// Instance names this occurrence: InstancePrefix and the request id
	// of the answer's X-Request-Id (requestid.go). writeProblem sets it.
	Instance string `json:"instance,omitempty"`
}

// problem writes a problem document and aborts the request.
func problem(c *gin.Context, status int, code, detail string) {
	writeProblem(c, Problem{Status: status, Code: code, Detail: detail})
}

func writeProblem(c *gin.Context, p Problem) {
	p.Type = ProblemType + p.Code
	p.Title = http.StatusText(p.Status)
	p.Instance = instance(RequestID(c))
	c.Abort()
	writeJSON(c, p.Status, "application/problem+json", p)
}

// executionProblem maps a batch-level execution error: queue_full is 429,
// any other raised execution error 503.
func executionProblem(c *gin.Context, e *toolerr.Error) {
	status := http.StatusServiceUnavailable
	detail := "The executor cannot take the batch now."
	if e.Code == toolerr.QueueFull {
		status = http.StatusTooManyRequests
		detail = "The batch would exceed the batch, process or per-principal capacity; nothing of it ran."
		c.Header("Retry-After", "1")
	}
	retryable := e.Retryable
	writeProblem(c, Problem{Status: status, Code: string(e.Code), Detail: detail, Retryable: &retryable})
}
