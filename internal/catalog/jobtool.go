package catalog

import "github.com/toolhost/toolhost/internal/registry"

// JobTool returns the service of snap whose runs submit jobs of jobType
// for operation (its run.job type and operation), and whether there is
// one. A job's input names the operation under "tool"; this is how the
// job handler and the jobs API find the tool a job belongs to.
func JobTool(snap *registry.Snapshot, jobType, operation string) (*registry.Service, bool) {
	for _, svc := range snap.Services() {
		if j := svc.Definition.Platform.Job; j != nil && svc.Definition.Platform.API &&
			j.Type == jobType && j.Operation == operation {
			return svc, true
		}
	}
	return nil, false
}

// JobTypes returns the job types the tools of snap declare, each once, in
// the order of their tools.
func JobTypes(snap *registry.Snapshot) []string {
	var types []string
	seen := map[string]bool{}
	for _, svc := range snap.Services() {
		if j := svc.Definition.Platform.Job; j != nil && !seen[j.Type] {
			seen[j.Type] = true
			types = append(types, j.Type)
		}
	}
	return types
}
