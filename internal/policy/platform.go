package policy

import (
	"fmt"
	"math"
)

// Byte units.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
)

// MinBatchItems is the fewest items a batch holds. It is not configurable.
const MinBatchItems = 1

// Platform is the platform policy of one API process: admission limits, byte
// caps and the budgets every operation is clamped to. The zero value is not
// usable; start from [DefaultPlatform] and check changes with
// [Platform.Validate].
type Platform struct {
	// MaxBatchItems is the most items one batch holds (the least is
	// MinBatchItems).
	MaxBatchItems int `json:"max_batch_items"`
	// WorkerLanes is the number of jobs that run at once in the process.
	WorkerLanes int `json:"worker_lanes"`
	// MaxPendingItemsPerProcess is the most admitted, unfinished items in
	// the process.
	MaxPendingItemsPerProcess int `json:"max_pending_items_per_process"`
	// MaxConcurrentBatchesPerPrincipal is the most batches one principal has
	// in flight.
	MaxConcurrentBatchesPerPrincipal int `json:"max_concurrent_batches_per_principal"`
	// MaxPendingItemsPerPrincipal is the most admitted, unfinished items of
	// one principal.
	MaxPendingItemsPerPrincipal int `json:"max_pending_items_per_principal"`

	MaxRequestBodyBytes  int64 `json:"max_request_body_bytes"`
	MaxResponseBodyBytes int64 `json:"max_response_body_bytes"`
	// EnvelopeReserveBytes is the room in each body cap for everything but
	// the items' parameters or results.
	EnvelopeReserveBytes int64 `json:"envelope_reserve_bytes"`
	MaxParameterBytes    int64 `json:"max_parameter_bytes"`
	MaxResultBytes       int64 `json:"max_result_bytes"`
	MaxJSONDepth         int   `json:"max_json_depth"`

	// IngressTimeoutMS is the budget for reading and admitting a request.
	IngressTimeoutMS int64 `json:"ingress_timeout_ms"`
	// QueueTimeoutMS is the shared queue budget from a batch's admission.
	QueueTimeoutMS int64 `json:"queue_timeout_ms"`
	// EngineTimeoutMS is one claimed engine window.
	EngineTimeoutMS int64 `json:"engine_timeout_ms"`
	// SoftTimeoutMS is the cooperative deadline seen by checkpoints.
	SoftTimeoutMS int64 `json:"soft_timeout_ms"`
	// HardTimeoutMS is the job budget, cold process startup included.
	HardTimeoutMS int64 `json:"hard_timeout_ms"`
	// OutputReserveMS is the time kept between the soft and hard deadlines
	// for validating and sending the output.
	OutputReserveMS  int64 `json:"output_reserve_ms"`
	CleanupTimeoutMS int64 `json:"cleanup_timeout_ms"`
	// ResponseReserveMS is the time kept for encoding the response.
	ResponseReserveMS int64 `json:"response_reserve_ms"`
	RequestTimeoutMS  int64 `json:"request_timeout_ms"`
	ClientTimeoutMS   int64 `json:"client_timeout_ms"`

	// MemoryLimitBytes is the memory limit of one job.
	MemoryLimitBytes int64 `json:"memory_limit_bytes"`
}

// DefaultPlatform returns the contract's platform defaults. They are limits,
// not throughput or latency guarantees. At the defaults the server bound
// equals the request deadline: 2 + 5 + 45 + 5 + 2 = 59 s.
func DefaultPlatform() Platform {
	return Platform{
		MaxBatchItems:                    4,
		WorkerLanes:                      2,
		MaxPendingItemsPerProcess:        8,
		MaxConcurrentBatchesPerPrincipal: 1,
		MaxPendingItemsPerPrincipal:      4,

		MaxRequestBodyBytes:  1 * MiB,
		MaxResponseBodyBytes: 1088 * KiB,
		EnvelopeReserveBytes: 64 * KiB,
		MaxParameterBytes:    128 * KiB,
		MaxResultBytes:       256 * KiB,
		MaxJSONDepth:         32,

		IngressTimeoutMS:  2_000,
		QueueTimeoutMS:    5_000,
		EngineTimeoutMS:   30_000,
		SoftTimeoutMS:     44_000,
		HardTimeoutMS:     45_000,
		OutputReserveMS:   1_000,
		CleanupTimeoutMS:  5_000,
		ResponseReserveMS: 2_000,
		RequestTimeoutMS:  59_000,
		ClientTimeoutMS:   65_000,

		MemoryLimitBytes: 1 * GiB,
	}
}

type limit struct {
	field string
	value int64
}

func (p Platform) limits() []limit {
	return []limit{
		{"max_batch_items", int64(p.MaxBatchItems)},
		{"worker_lanes", int64(p.WorkerLanes)},
		{"max_pending_items_per_process", int64(p.MaxPendingItemsPerProcess)},
		{"max_concurrent_batches_per_principal", int64(p.MaxConcurrentBatchesPerPrincipal)},
		{"max_pending_items_per_principal", int64(p.MaxPendingItemsPerPrincipal)},
		{"max_request_body_bytes", p.MaxRequestBodyBytes},
		{"max_response_body_bytes", p.MaxResponseBodyBytes},
		{"envelope_reserve_bytes", p.EnvelopeReserveBytes},
		{"max_parameter_bytes", p.MaxParameterBytes},
		{"max_result_bytes", p.MaxResultBytes},
		{"max_json_depth", int64(p.MaxJSONDepth)},
		{"ingress_timeout_ms", p.IngressTimeoutMS},
		{"queue_timeout_ms", p.QueueTimeoutMS},
		{"engine_timeout_ms", p.EngineTimeoutMS},
		{"soft_timeout_ms", p.SoftTimeoutMS},
		{"hard_timeout_ms", p.HardTimeoutMS},
		{"output_reserve_ms", p.OutputReserveMS},
		{"cleanup_timeout_ms", p.CleanupTimeoutMS},
		{"response_reserve_ms", p.ResponseReserveMS},
		{"request_timeout_ms", p.RequestTimeoutMS},
		{"client_timeout_ms", p.ClientTimeoutMS},
		{"memory_limit_bytes", p.MemoryLimitBytes},
	}
}

// ServerBoundMS returns ingress + queue + hard + cleanup + response reserve,
// saturating at math.MaxInt64 instead of overflowing.
func (p Platform) ServerBoundMS() int64 {
	return serverBound(p.IngressTimeoutMS, p.QueueTimeoutMS, p.HardTimeoutMS, p.CleanupTimeoutMS, p.ResponseReserveMS)
}

// Validate reports the first coherence rule p breaks, in the order of the
// Rule constants, as a *CoherenceError; nil means p is coherent. Sums and
// products saturate, so huge values break a rule instead of overflowing.
func (p Platform) Validate() error {
	for _, l := range p.limits() {
		if l.value <= 0 {
			return &CoherenceError{Rule: RulePositive, Field: l.field, Detail: fmt.Sprintf("%s is %d", l.field, l.value)}
		}
	}
	incoherent := func(rule Rule, format string, args ...any) error {
		return &CoherenceError{Rule: rule, Detail: fmt.Sprintf(format, args...)}
	}
	if p.EngineTimeoutMS > p.SoftTimeoutMS {
		return incoherent(RuleEngineWithinSoft, "engine_timeout_ms %d > soft_timeout_ms %d", p.EngineTimeoutMS, p.SoftTimeoutMS)
	}
	if s := addSat(p.SoftTimeoutMS, p.OutputReserveMS); s > p.HardTimeoutMS {
		return incoherent(RuleSoftWithinHard, "soft_timeout_ms + output_reserve_ms %d > hard_timeout_ms %d", s, p.HardTimeoutMS)
	}
	if b := p.ServerBoundMS(); b > p.RequestTimeoutMS {
		return incoherent(RuleServerBound, "server bound %d ms > request_timeout_ms %d", b, p.RequestTimeoutMS)
	}
	if p.ClientTimeoutMS <= p.RequestTimeoutMS {
		return incoherent(RuleClientAfterRequest, "client_timeout_ms %d <= request_timeout_ms %d", p.ClientTimeoutMS, p.RequestTimeoutMS)
	}
	items := int64(p.MaxBatchItems)
	if n := addSat(mulSat(items, p.MaxParameterBytes), p.EnvelopeReserveBytes); n > p.MaxRequestBodyBytes {
		return incoherent(RuleRequestBodyFitsBatch, "full batch %d bytes > max_request_body_bytes %d", n, p.MaxRequestBodyBytes)
	}
	if n := addSat(mulSat(items, p.MaxResultBytes), p.EnvelopeReserveBytes); n > p.MaxResponseBodyBytes {
		return incoherent(RuleResponseBodyFitsBatch, "full batch %d bytes > max_response_body_bytes %d", n, p.MaxResponseBodyBytes)
	}
	if p.MaxBatchItems > p.MaxPendingItemsPerPrincipal {
		return incoherent(RuleBatchWithinPrincipal, "max_batch_items %d > max_pending_items_per_principal %d", p.MaxBatchItems, p.MaxPendingItemsPerPrincipal)
	}
	if p.MaxPendingItemsPerPrincipal > p.MaxPendingItemsPerProcess {
		return incoherent(RulePrincipalWithinProcess, "max_pending_items_per_principal %d > max_pending_items_per_process %d", p.MaxPendingItemsPerPrincipal, p.MaxPendingItemsPerProcess)
	}
	return nil
}

func serverBound(ingress, queue, hard, cleanup, responseReserve int64) int64 {
	return addSat(addSat(addSat(addSat(ingress, queue), hard), cleanup), responseReserve)
}

// addSat returns a + b, saturating at the int64 range.
func addSat(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}

// mulSat returns a × b for non-negative a and b, saturating at
// math.MaxInt64.
func mulSat(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}
