package api

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/contracts"
	"github.com/toolhost/toolhost/internal/run"
	"github.com/toolhost/toolhost/internal/wire"
)

// The run-request contract lists the problem codes the run route cites,
// each described with the HTTP status this dialect answers it with.
func TestProblemCodes(t *testing.T) {
	raw, _ := contracts.Raw(contracts.RunRequestV1)
	v, err := wire.Decode(raw, wire.Limits{MaxDepth: 64})
	if err != nil {
		t.Fatal(err)
	}
	code := v.(map[string]any)["$defs"].(map[string]any)["problemCode"].(map[string]any)
	var listed []string
	for _, c := range code["anyOf"].([]any) {
		m := c.(map[string]any)
		name := m["const"].(string)
		listed = append(listed, name)
		pc, ok := contracts.Problem(name)
		status := pc.Status
		if !ok {
			t.Errorf("%s is listed but has no status", name)
			continue
		}
		if d, _ := m["description"].(string); !strings.HasPrefix(d, strconv.Itoa(status)+": ") {
			t.Errorf("%s: description %q does not start with its status %d", name, d, status)
		}
	}
	// Every refusal of the application layer that the run route can
	// answer has a listed code; those of a job's own routes (a job
	// read, retried or downloaded) and of the legacy routes' matching
	// are not the run route's.
	notRun := []run.Code{run.JobNotFound, run.JobExpired, run.JobState, run.JobSignature, run.JobsUnavailable,
		run.LegacyNotFound, run.MethodNotAllowed, run.CSRFFailed}
	for rc, code := range refusalCodes {
		if !slices.Contains(listed, code) && !slices.Contains(notRun, rc) {
			t.Errorf("the refusal %s answers %s, which the contract does not list", rc, code)
		}
	}
	for _, c := range []string{"tools.tool.not_found", "tools.tool.not_runnable", "tools.tool.unavailable",
		"tools.run.invalid_input", "tools.run.payload_too_large",
		"tools.caller.unauthenticated", "tools.caller.forbidden", "tools.caller.quota_exceeded"} {
		if !slices.Contains(listed, c) {
			t.Errorf("%s is not listed", c)
		}
	}
	problem := map[string]any{"type": "https://toolhost.dev/problems/tools.tool.not_runnable", "title": "Not Found",
		"status": 404, "code": contracts.ProblemToolNotRunnable, "detail": "yt is page-only."}
	if err := contracts.ValidateProblem(problem); err != nil {
		t.Errorf("problem: %v", err)
	}
	problem["issues"] = []any{map[string]any{"code": "required", "path": []any{"text"}}}
	problem["issue_count"] = 1
	if err := contracts.ValidateProblem(problem); err != nil {
		t.Errorf("problem with issues: %v", err)
	}
	problem["code"] = "not_found"
	var ce *contracts.Error
	if err := contracts.ValidateProblem(problem); !errors.As(err, &ce) || ce.Contract != contracts.ProblemName {
		t.Errorf("problem with an unlisted code: %v", err)
	}
}
