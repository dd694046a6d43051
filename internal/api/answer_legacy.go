// The legacy answer dialect (ADR-027, "Legacy endpoints get deprecation
// headers"): the old APIs' shapes for a run that happened — the result
// document itself on success, {"success": false, "error": …} on a failure
// — beside the deprecation headers the routes set. A refusal before the
// run is the ADR-027 problem of the same refusal (answer_tools.go), so the
// same refusal gets the same status on every route; a legacy route no
// tool answers is 404 legacy_not_found.

package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/toolhost/toolhost/internal/run"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// legacyError is the old APIs' error answer.
type legacyError struct {
	Success bool           `json:"success"`
	Error   *toolerr.Error `json:"error"`
}

// answerLegacy answers a run that happened in the old shapes, 200 either
// way, as the run route answers it.
func answerLegacy(c *gin.Context, r *run.Result) {
	if r.Succeeded {
		c.Data(http.StatusOK, "application/json; charset=utf-8", r.Result)
		return
	}
	writeJSON(c, http.StatusOK, "application/json", legacyError{Error: r.Error})
}
