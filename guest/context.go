package guest

// Context is one item's view of the host, passed to Service.Compute. It is
// valid only during that call and is not safe for concurrent use.
type Context struct {
	toolCode  string
	operation string
	stopped   bool // a checkpoint or claim said stop; the item fails with execution_limit
	claimed   bool
}

// EngineWindow is the time a long-running engine (a solver, a renderer)
// may run, granted by [Context.ClaimEngineWindow].
type EngineWindow struct {
	// TimeoutMS is the engine's budget in milliseconds: pass it to the
	// engine as its time limit.
	TimeoutMS int64
}

// ToolCode returns the tool_code of the service being computed.
func (c *Context) ToolCode() string { return c.toolCode }

// Operation returns the operation being computed.
func (c *Context) Operation() string { return c.operation }

// Checkpoint asks the host whether to go on. It returns nil to go on, or an
// *Error with code execution_limit (retryable) when the soft deadline has
// passed or the item was cancelled: Compute must then return promptly,
// returning that error (wrapped or not). Once it has said stop it keeps
// saying so without asking the host again, and the item fails with
// execution_limit whatever Compute returns.
//
// Call it at bounded intervals in long loops; each call is a cheap host
// call.
func (c *Context) Checkpoint() error {
	if c.stopped {
		return errStop("stopped: the soft deadline has passed or the item was cancelled")
	}
	if hostCheckpoint() != 0 {
		c.stopped = true
		return errStop("stopped: the soft deadline has passed or the item was cancelled")
	}
	return nil
}

// ClaimEngineWindow runs a checkpoint and claims the item's one engine
// window, keeping reserveMS milliseconds of the soft window for the work
// that follows the engine. It returns the window, or an *Error with code
// execution_limit (retryable) when the item must stop or the remaining soft
// window cannot hold the engine budget plus reserveMS; the item then fails
// with execution_limit whatever Compute returns. A second claim, or a
// negative reserveMS, is an execution_failed error and does not reach the
// host.
func (c *Context) ClaimEngineWindow(reserveMS int64) (EngineWindow, error) {
	if c.stopped {
		return EngineWindow{}, errStop("stopped: the soft deadline has passed or the item was cancelled")
	}
	if reserveMS < 0 {
		return EngineWindow{}, sdkFailure("ClaimEngineWindow: negative reserve")
	}
	if c.claimed {
		return EngineWindow{}, sdkFailure("ClaimEngineWindow: the engine window was already claimed for this item")
	}
	c.claimed = true
	ms := hostClaimEngineWindow(reserveMS)
	if ms < 0 {
		c.stopped = true
		return EngineWindow{}, errStop("no engine window: the remaining soft window cannot hold the engine budget plus the reserve")
	}
	return EngineWindow{TimeoutMS: ms}, nil
}

// Logf writes a line to the host's bounded log at info level. The log is
// for the operator, never shown to callers; do not log submitted values
// you would not show an operator.
func (c *Context) Logf(format string, args ...any) {
	logInfo(sprintf(format, args...))
}
