package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/contracts"
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

// problemTypeOf is the type URI of a problem with code: ProblemType
// followed by the ADR-027 code of its refusal, whichever route answers (a
// seed-000 route's 429 quota_exceeded and a run route's
// tools.caller.quota_exceeded are one type), while its code stays the
// dialect's; a code of its own type otherwise (contracts.ProblemCode.Type).
func problemTypeOf(code string) string {
	if p, ok := contracts.Problem(code); ok && p.Type != "" {
		return ProblemType + p.Type
	}
	return ProblemType + code
}

// reasonPhrases are RFC 9110's reason phrases where net/http's StatusText
// keeps an older one.
var reasonPhrases = map[int]string{
	http.StatusRequestEntityTooLarge:        "Content Too Large",
	http.StatusRequestedRangeNotSatisfiable: "Range Not Satisfiable",
	http.StatusUnprocessableEntity:          "Unprocessable Content",
}

// problemTitle is a problem's title: the current reason phrase of status.
func problemTitle(status int) string {
	if t, ok := reasonPhrases[status]; ok {
		return t
	}
	return http.StatusText(status)
}

func writeProblem(c *gin.Context, p Problem) {
	p.Type = problemTypeOf(p.Code)
	p.Title = problemTitle(p.Status)
	p.Instance = instance(RequestID(c))
	c.Abort()
	writeJSON(c, p.Status, "application/problem+json", p)
}
