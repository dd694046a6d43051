package run

import (
	"time"

	"github.com/toolhost/toolhost/internal/executor"
	"github.com/toolhost/toolhost/internal/registry"
)

// LoadingRetry is the Retry-After of a Loading refusal: the first scan's
// remaining loads take seconds (each is bounded by its phase deadlines),
// and a retry costs the caller little.
const LoadingRetry = time.Second

// notFound is the refusal of a lookup that found no tool in snap: Loading
// while snap was published during the tools folder's first scan (the
// code may be a module's still loading: absence is not known yet),
// ToolNotFound with detail after it.
func notFound(snap *registry.Snapshot, detail string) *Refusal {
	if snap.Starting() {
		return &Refusal{Code: Loading, RetryAfter: LoadingRetry,
			Detail: "The server is still loading its tools, and this one may be among them; retry after the Retry-After."}
	}
	return refuse(ToolNotFound, detail)
}

// StillLoading is the Loading refusal while snap was published during
// the tools folder's first scan, nil after it: for a surface that found
// no tool by its own matching (a legacy route), whose absence the end of
// the scan may contradict.
func StillLoading(snap *registry.Snapshot) error {
	if snap.Starting() {
		return notFound(snap, "")
	}
	return nil
}

// BatchLoading refuses a prepared batch (PrepareBatch) one of whose items
// names a tool code snap does not have — neither published nor
// quarantined — while snap is starting: Loading, for the whole batch,
// since the item's unknown_tool would be an answer that the end of the
// scan may contradict. It returns nil otherwise, and after the first
// scan the item answers unknown_tool as before.
func BatchLoading(snap *registry.Snapshot, items []executor.Item) error {
	if !snap.Starting() {
		return nil
	}
	for _, it := range items {
		if _, ok := snap.Service(it.ToolCode); ok {
			continue
		}
		if _, ok := snap.Quarantined(it.ToolCode); !ok {
			return notFound(snap, "")
		}
	}
	return nil
}
