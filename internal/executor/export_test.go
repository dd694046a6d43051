package executor

// SetBeforeQueue makes every item of e call f after its checks, before it
// waits for a lane. Call it before the first Compute.
func SetBeforeQueue(e *Executor, f func(Item)) { e.hooks.beforeQueue = f }

// Admitting returns how many batches wait for the process's pending items.
func Admitting(e *Executor) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.admitting.Len()
}
