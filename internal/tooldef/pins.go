package tooldef

import "github.com/toolhost/toolhost/internal/toolerr"

// IssueMismatch is the issue code of a version_mismatch: its path names
// the stale pin (contract_version, implementation_version,
// schema_fingerprint, or tool_code for a worker that lacks the tool).
const IssueMismatch = "mismatch"

// CheckPins compares the pins a caller ran against — an item's or a job's
// contract version, implementation version and schema fingerprint — with
// d. It returns nil when all three are d's, otherwise a version_mismatch
// with one IssueMismatch issue per stale pin, in the order
// contract_version, implementation_version, schema_fingerprint.
func (d *Definition) CheckPins(contract, implementation, fingerprint string) *toolerr.Error {
	var issues []toolerr.Issue
	if contract != d.ContractVersion {
		issues = append(issues, toolerr.NewIssue(IssueMismatch, "contract_version"))
	}
	if implementation != d.ImplementationVersion {
		issues = append(issues, toolerr.NewIssue(IssueMismatch, "implementation_version"))
	}
	if fingerprint != d.Fingerprint {
		issues = append(issues, toolerr.NewIssue(IssueMismatch, "schema_fingerprint"))
	}
	if len(issues) > 0 {
		return toolerr.New(toolerr.VersionMismatch, issues...)
	}
	return nil
}
