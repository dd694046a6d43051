package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/toolerr"
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

func writeProblem(c *gin.Context, p Problem) {
	p.Type = ProblemType + p.Code
	p.Title = http.StatusText(p.Status)
	p.Instance = instance(RequestID(c))
	c.Abort()
	writeJSON(c, p.Status, "application/problem+json", p)
}
