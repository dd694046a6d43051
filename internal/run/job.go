package run

import (
	"context"
	"errors"
	"maps"

	"github.com/toolhost/toolhost/internal/abuse"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// JobTool finds the tool that runs jobs of jobType whose input names
// operation under "tool" (its run.job), for a submission or a retry:
// ToolNotFound when none does, Loading while snap is starting.
func JobTool(snap *registry.Snapshot, jobType, operation string) (*registry.Service, error) {
	if svc, ok := snap.JobTool(jobType, operation); ok {
		return svc, nil
	}
	return nil, notFound(snap, `No tool runs jobs of this type and input "tool".`)
}

// JobRunnable refuses a job of svc that cannot run now or does not take
// o's caller, before any of its body is read: ToolUnavailable, or
// Unauthenticated for an anonymous caller of a tool that needs a signed-in
// one, which is recorded in the abuse log like every other refusal of the
// caller.
func (a *App) JobRunnable(ctx context.Context, svc *registry.Service, o Origin) error {
	err := JobRunnable(svc, o)
	var r *Refusal
	if errors.As(err, &r) && r.Code == Unauthenticated {
		a.RecordUnauthenticated(ctx, o, svc.Code())
	}
	return err
}

// RecordUnauthenticated records an anonymous caller refused by a tool (or
// a route of tools) that needs a signed-in one, when the refusal is made
// before the guard is asked (a job tool before its body is read, a legacy
// route none of whose tools takes anonymous callers): the abuse row and
// the refusal metric, as the guard's own refusals get.
func (a *App) RecordUnauthenticated(ctx context.Context, o Origin, tool string) {
	a.record(ctx, abuse.Entry{IP: o.Caller.IP, Principal: o.Caller.Principal, Tool: tool, Reason: string(guard.ReasonUnauthenticated), RequestID: o.RequestID})
	if m := a.cfg.Metrics; m != nil {
		m.CountRefusal(string(guard.ReasonUnauthenticated))
	}
}

// JobRunnable is App.JobRunnable without the abuse log.
func JobRunnable(svc *registry.Service, o Origin) error {
	if !svc.Available() {
		return serviceUnavailable(svc)
	}
	if !svc.Platform().Anonymous && o.Anonymous() {
		return refuse(Unauthenticated, "This tool needs a signed-in caller.")
	}
	return nil
}

// JobInput is the input of the job a run of job tool svc submits:
// { ...input, ...run.job.preset, tool: run.job.operation }.
func JobInput(svc *registry.Service, input map[string]any) map[string]any {
	j := svc.Platform().Job
	out := make(map[string]any, len(input)+len(j.Preset)+1)
	maps.Copy(out, input)
	maps.Copy(out, j.Preset)
	out["tool"] = j.Operation
	return out
}

// JobParameters are the parameters a job of svc runs its tool with: the
// job's input without "tool", with the operation it names.
func JobParameters(input map[string]any) map[string]any {
	params := make(map[string]any, len(input)+1)
	for k, v := range input {
		if k != "tool" {
			params[k] = v
		}
	}
	params["operation"] = input["tool"]
	return params
}

// CheckJobInput checks a job's input (the job's input document, "tool"
// included) against svc's input schema, as the job will run it, before
// any job exists: the parameters (JobParameters) with an empty string
// standing in for each file input the submission provides (provided
// reports which: referenced, or possibly uploaded), so that a required
// file nobody sends is refused before a job exists. A mismatch is an
// InvalidInput refusal with the sanitised issues.
func CheckJobInput(svc *registry.Service, input map[string]any, provided func(name string) bool) error {
	params := JobParameters(input)
	for _, f := range svc.Platform().Files {
		if _, ok := params[f.Name]; !ok && provided(f.Name) {
			params[f.Name] = ""
		}
	}
	v, err := svc.InputValidator()
	if err != nil {
		return refuse(ToolUnavailable, "The tool's input schema cannot be used now.")
	}
	if err := v.Validate(params, toolerr.InvalidParameters); err != nil {
		var te *toolerr.Error
		if errors.As(err, &te) {
			return ItemRefusal(te)
		}
		return refuse(InvalidInput, "The input does not match the tool's input schema.")
	}
	return nil
}
