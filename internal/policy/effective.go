package policy

import "fmt"

// Effective is an operation policy clamped to the platform: the values the
// catalogue publishes and the executor enforces. It carries the platform's
// ingress timeout, output reserve and response reserve so that a consumer
// needs nothing else to place the deadlines. Only [Clamp] makes a valid one.
type Effective struct {
	Name          string `json:"operation"`
	Pure          bool   `json:"pure"`
	Deterministic bool   `json:"deterministic"`
	Deduplication string `json:"deduplication"`

	MaxParameterBytes int64 `json:"max_parameter_bytes"`
	MaxResultBytes    int64 `json:"max_result_bytes"`
	QueueTimeoutMS    int64 `json:"queue_timeout_ms"`
	EngineTimeoutMS   int64 `json:"engine_timeout_ms"`
	SoftTimeoutMS     int64 `json:"soft_timeout_ms"`
	HardTimeoutMS     int64 `json:"hard_timeout_ms"`
	CleanupTimeoutMS  int64 `json:"cleanup_timeout_ms"`
	RequestTimeoutMS  int64 `json:"request_timeout_ms"`
	ClientTimeoutMS   int64 `json:"client_timeout_ms"`
	MemoryLimitBytes  int64 `json:"memory_limit_bytes"`

	// The platform's values, copied unchanged.
	IngressTimeoutMS  int64 `json:"ingress_timeout_ms"`
	OutputReserveMS   int64 `json:"output_reserve_ms"`
	ResponseReserveMS int64 `json:"response_reserve_ms"`
}

// ServerBoundMS returns ingress + queue + hard + cleanup + response reserve,
// saturating at math.MaxInt64. For an Effective from Clamp it is at most
// RequestTimeoutMS.
func (e Effective) ServerBoundMS() int64 {
	return serverBound(e.IngressTimeoutMS, e.QueueTimeoutMS, e.HardTimeoutMS, e.CleanupTimeoutMS, e.ResponseReserveMS)
}

// Clamp returns op clamped to p, as the catalogue's effective_operation:
// every limit becomes the smaller of the two values, the soft deadline is
// also capped at hard − output reserve, and the engine budget at the soft
// deadline.
//
// Clamp refuses, with an *OperationError carrying invalid_operation_policy:
// an op that fails [Operation.Validate]; a clamped soft deadline that is not
// positive (ErrSoftDeadline); a server bound that exceeds the clamped request
// deadline (ErrServerBound); a clamped client deadline that does not exceed
// the clamped request deadline (ErrClientDeadline). An incoherent p is
// refused with its *CoherenceError, which is the operator's fault, not the
// operation's, and carries no platform code.
func Clamp(p Platform, op Operation) (Effective, error) {
	if err := p.Validate(); err != nil {
		return Effective{}, fmt.Errorf("clamping operation: %w", err)
	}
	if err := op.Validate(); err != nil {
		return Effective{}, err
	}
	e := Effective{
		Name:          op.Name,
		Pure:          op.Pure,
		Deterministic: op.Deterministic,
		Deduplication: op.Deduplication,

		MaxParameterBytes: min(p.MaxParameterBytes, op.MaxParameterBytes),
		MaxResultBytes:    min(p.MaxResultBytes, op.MaxResultBytes),
		QueueTimeoutMS:    min(p.QueueTimeoutMS, op.QueueTimeoutMS),
		HardTimeoutMS:     min(p.HardTimeoutMS, op.HardTimeoutMS),
		CleanupTimeoutMS:  min(p.CleanupTimeoutMS, op.CleanupTimeoutMS),
		RequestTimeoutMS:  min(p.RequestTimeoutMS, op.RequestTimeoutMS),
		ClientTimeoutMS:   min(p.ClientTimeoutMS, op.ClientTimeoutMS),
		MemoryLimitBytes:  min(p.MemoryLimitBytes, op.MemoryLimitBytes),

		IngressTimeoutMS:  p.IngressTimeoutMS,
		OutputReserveMS:   p.OutputReserveMS,
		ResponseReserveMS: p.ResponseReserveMS,
	}
	// Both operands are positive after validation: no overflow.
	e.SoftTimeoutMS = min(p.SoftTimeoutMS, op.SoftTimeoutMS, e.HardTimeoutMS-e.OutputReserveMS)
	e.EngineTimeoutMS = min(p.EngineTimeoutMS, op.EngineTimeoutMS, e.SoftTimeoutMS)

	if e.SoftTimeoutMS <= 0 {
		return Effective{}, newOperationError(op.Name, ErrSoftDeadline, RuleSoftPositive, "soft_timeout_ms",
			"clamped soft deadline %d ms (hard %d ms − output reserve %d ms) is not positive",
			e.SoftTimeoutMS, e.HardTimeoutMS, e.OutputReserveMS)
	}
	if b := e.ServerBoundMS(); b > e.RequestTimeoutMS {
		return Effective{}, newOperationError(op.Name, ErrServerBound, RuleServerBound, "request_timeout_ms",
			"server bound %d ms (ingress %d + queue %d + hard %d + cleanup %d + response reserve %d) exceeds request deadline %d ms",
			b, e.IngressTimeoutMS, e.QueueTimeoutMS, e.HardTimeoutMS, e.CleanupTimeoutMS, e.ResponseReserveMS, e.RequestTimeoutMS)
	}
	// This rule is our addition: the contract requires client > request of
	// the platform only, but an operation whose client gives up no later
	// than the server's own deadline would have every slow result thrown
	// away by the client, so it is refused like the other incoherent clamps.
	if e.ClientTimeoutMS <= e.RequestTimeoutMS {
		return Effective{}, newOperationError(op.Name, ErrClientDeadline, RuleClientAfterRequest, "client_timeout_ms",
			"clamped client deadline %d ms does not exceed request deadline %d ms", e.ClientTimeoutMS, e.RequestTimeoutMS)
	}
	return e, nil
}
