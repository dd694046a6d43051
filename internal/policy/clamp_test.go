package policy

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/toolhost/toolhost/internal/toolerr"
)

// pacPlan is the seed's worked example: the plan operation of the PAC
// allocator declares 256 KiB / 512 KiB and budgets equal to the platform's.
func pacPlan() Operation {
	op := DefaultOperation("plan")
	op.Deterministic = true
	op.MaxParameterBytes = 256 * KiB
	op.MaxResultBytes = 512 * KiB
	op.EngineTimeoutMS = 30_000
	op.SoftTimeoutMS = 44_000
	op.HardTimeoutMS = 45_000
	op.QueueTimeoutMS = 5_000
	op.CleanupTimeoutMS = 5_000
	op.RequestTimeoutMS = 59_000
	op.ClientTimeoutMS = 65_000
	op.MemoryLimitBytes = 1 * GiB
	return op
}

// effective builds an Effective with the default platform's ingress, output
// reserve and response reserve.
func effective(name string, deterministic bool, params, results, queue, engine, soft, hard, cleanup, request, client, memory int64) Effective {
	return Effective{
		Name: name, Pure: true, Deterministic: deterministic, Deduplication: "none",
		MaxParameterBytes: params, MaxResultBytes: results,
		QueueTimeoutMS: queue, EngineTimeoutMS: engine, SoftTimeoutMS: soft, HardTimeoutMS: hard,
		CleanupTimeoutMS: cleanup, RequestTimeoutMS: request, ClientTimeoutMS: client,
		MemoryLimitBytes: memory,
		IngressTimeoutMS: 2_000, OutputReserveMS: 1_000, ResponseReserveMS: 2_000,
	}
}

func TestClamp(t *testing.T) {
	tests := []struct {
		name      string
		op        func() Operation
		want      Effective
		wantBound int64
	}{
		{
			name:      "PAC plan",
			op:        pacPlan,
			want:      effective("plan", true, 128*KiB, 256*KiB, 5_000, 30_000, 44_000, 45_000, 5_000, 59_000, 65_000, GiB),
			wantBound: 59_000,
		},
		{
			name:      "default operation clamps to itself",
			op:        func() Operation { return DefaultOperation("value") },
			want:      effective("value", false, 128*KiB, 256*KiB, 5_000, 4_000, 4_000, 5_000, 2_000, 20_000, 25_000, GiB),
			wantBound: 2_000 + 5_000 + 5_000 + 2_000 + 2_000,
		},
		{
			name: "everything above the platform",
			op: func() Operation {
				return Operation{Name: "big", Pure: true, Deterministic: false, Deduplication: "none", MaxParameterBytes: 1 << 40, MaxResultBytes: 1 << 40, QueueTimeoutMS: 1e9, EngineTimeoutMS: 1e9, SoftTimeoutMS: 1e9, HardTimeoutMS: 1e9, CleanupTimeoutMS: 1e9, RequestTimeoutMS: 1e9, ClientTimeoutMS: 2e9, MemoryLimitBytes: 1 << 50}
			},
			want:      effective("big", false, 128*KiB, 256*KiB, 5_000, 30_000, 44_000, 45_000, 5_000, 59_000, 65_000, GiB),
			wantBound: 59_000,
		},
		{
			name: "soft capped at hard minus output reserve",
			op: func() Operation {
				op := pacPlan()
				op.SoftTimeoutMS = 45_000
				return op
			},
			want:      effective("plan", true, 128*KiB, 256*KiB, 5_000, 30_000, 44_000, 45_000, 5_000, 59_000, 65_000, GiB),
			wantBound: 59_000,
		},
		{
			name: "soft capped by a short hard",
			op: func() Operation {
				op := DefaultOperation("value")
				op.SoftTimeoutMS = 10_000
				op.HardTimeoutMS = 3_000
				return op
			},
			want:      effective("value", false, 128*KiB, 256*KiB, 5_000, 2_000, 2_000, 3_000, 2_000, 20_000, 25_000, GiB),
			wantBound: 14_000,
		},
		{
			name: "engine capped at soft",
			op: func() Operation {
				op := DefaultOperation("value")
				op.EngineTimeoutMS = 10_000
				op.SoftTimeoutMS = 3_000
				return op
			},
			want:      effective("value", false, 128*KiB, 256*KiB, 5_000, 3_000, 3_000, 5_000, 2_000, 20_000, 25_000, GiB),
			wantBound: 16_000,
		},
		{
			name: "engine capped at soft capped at hard",
			op: func() Operation {
				op := DefaultOperation("value")
				op.EngineTimeoutMS = 30_000
				op.SoftTimeoutMS = 30_000
				op.HardTimeoutMS = 1_001
				return op
			},
			want:      effective("value", false, 128*KiB, 256*KiB, 5_000, 1, 1, 1_001, 2_000, 20_000, 25_000, GiB),
			wantBound: 12_001,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Clamp(DefaultPlatform(), tt.op())
			if err != nil {
				t.Fatalf("Clamp() = %v", err)
			}
			if got != tt.want {
				t.Errorf("Clamp() =\n%+v\nwant\n%+v", got, tt.want)
			}
			if b := got.ServerBoundMS(); b != tt.wantBound {
				t.Errorf("ServerBoundMS() = %d, want %d", b, tt.wantBound)
			}
		})
	}
}

func TestClampRefusals(t *testing.T) {
	tests := []struct {
		name     string
		op       func() Operation
		sentinel error
		rule     Rule
		field    string
	}{
		{
			name: "PAC plan with request one ms short",
			op: func() Operation {
				op := pacPlan()
				op.RequestTimeoutMS = 58_999
				return op
			},
			sentinel: ErrServerBound, rule: RuleServerBound, field: "request_timeout_ms",
		},
		{
			name: "default operation with a short request",
			op: func() Operation {
				op := DefaultOperation("value")
				op.RequestTimeoutMS = 15_999 // bound 2+5+5+2+2 = 16 s
				return op
			},
			sentinel: ErrServerBound, rule: RuleServerBound, field: "request_timeout_ms",
		},
		{
			name: "tiny request",
			op: func() Operation {
				return Operation{Name: "tiny", Pure: true, Deterministic: true, Deduplication: "none", MaxParameterBytes: 1, MaxResultBytes: 2, QueueTimeoutMS: 3, EngineTimeoutMS: 4, SoftTimeoutMS: 5, HardTimeoutMS: 1_006, CleanupTimeoutMS: 7, RequestTimeoutMS: 100, ClientTimeoutMS: 101, MemoryLimitBytes: 1}
			},
			sentinel: ErrServerBound, rule: RuleServerBound, field: "request_timeout_ms",
		},
		{
			name: "hard equal to output reserve",
			op: func() Operation {
				op := DefaultOperation("value")
				op.HardTimeoutMS = 1_000
				return op
			},
			sentinel: ErrSoftDeadline, rule: RuleSoftPositive, field: "soft_timeout_ms",
		},
		{
			name: "hard under output reserve",
			op: func() Operation {
				op := DefaultOperation("value")
				op.HardTimeoutMS = 1
				return op
			},
			sentinel: ErrSoftDeadline, rule: RuleSoftPositive, field: "soft_timeout_ms",
		},
		{
			name: "client equal to request",
			op: func() Operation {
				op := DefaultOperation("value")
				op.ClientTimeoutMS = 20_000
				return op
			},
			sentinel: ErrClientDeadline, rule: RuleClientAfterRequest, field: "client_timeout_ms",
		},
		{
			name: "client under request",
			op: func() Operation {
				op := DefaultOperation("value")
				op.ClientTimeoutMS = 19_999
				return op
			},
			sentinel: ErrClientDeadline, rule: RuleClientAfterRequest, field: "client_timeout_ms",
		},
		{
			name: "client equal to the clamped request",
			op: func() Operation {
				op := pacPlan()
				op.RequestTimeoutMS = 70_000 // clamped to 59 s
				op.ClientTimeoutMS = 59_000
				return op
			},
			sentinel: ErrClientDeadline, rule: RuleClientAfterRequest, field: "client_timeout_ms",
		},
		{
			name:     "invalid operation",
			op:       func() Operation { op := pacPlan(); op.Pure = false; return op },
			sentinel: ErrImpure, rule: RulePure, field: "pure",
		},
		{
			name:     "non-positive operation limit",
			op:       func() Operation { op := pacPlan(); op.QueueTimeoutMS = 0; return op },
			sentinel: ErrNonPositiveLimit, rule: RulePositive, field: "queue_timeout_ms",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := tt.op()
			got, err := Clamp(DefaultPlatform(), op)
			if err == nil {
				t.Fatalf("Clamp() = %+v, want error", got)
			}
			if got != (Effective{}) {
				t.Errorf("Clamp() returned %+v with its error, want zero", got)
			}
			oe := checkOperationError(t, err, tt.sentinel, tt.rule, tt.field)
			if oe.Operation != op.Name {
				t.Errorf("Operation = %q, want %q", oe.Operation, op.Name)
			}
		})
	}
}

func TestClampIncoherentPlatform(t *testing.T) {
	p := DefaultPlatform()
	p.RequestTimeoutMS = 58_999
	_, err := Clamp(p, DefaultOperation("value"))
	if !errors.Is(err, ErrIncoherent) {
		t.Fatalf("Clamp() = %v, want ErrIncoherent", err)
	}
	if code, ok := toolerr.CodeOf(err); ok {
		t.Errorf("incoherent platform carries platform code %q, want none", code)
	}
}

// TestClampGuarantees clamps many pseudo-random operations and checks the
// package's promises on every success.
func TestClampGuarantees(t *testing.T) {
	p := DefaultPlatform()
	r := rand.New(rand.NewPCG(1, 2))
	n := func(limit int64) int64 { return 1 + r.Int64N(limit) }
	accepted := 0
	for i := range 20_000 {
		op := Operation{
			Name: "op", Pure: true, Deduplication: "none",
			MaxParameterBytes: n(512 * KiB), MaxResultBytes: n(1 * MiB),
			QueueTimeoutMS: n(10_000), EngineTimeoutMS: n(60_000), SoftTimeoutMS: n(60_000),
			HardTimeoutMS: n(60_000), CleanupTimeoutMS: n(10_000), RequestTimeoutMS: n(80_000),
			ClientTimeoutMS: n(80_000), MemoryLimitBytes: n(2 * GiB),
		}
		e, err := Clamp(p, op)
		if err != nil {
			if _, ok := toolerr.CodeOf(err); !ok {
				t.Fatalf("case %d: Clamp() = %v without a platform code", i, err)
			}
			continue
		}
		accepted++
		pairs := []struct {
			name             string
			got, plat, opVal int64
		}{
			{"max_parameter_bytes", e.MaxParameterBytes, p.MaxParameterBytes, op.MaxParameterBytes},
			{"max_result_bytes", e.MaxResultBytes, p.MaxResultBytes, op.MaxResultBytes},
			{"queue_timeout_ms", e.QueueTimeoutMS, p.QueueTimeoutMS, op.QueueTimeoutMS},
			{"engine_timeout_ms", e.EngineTimeoutMS, p.EngineTimeoutMS, op.EngineTimeoutMS},
			{"soft_timeout_ms", e.SoftTimeoutMS, p.SoftTimeoutMS, op.SoftTimeoutMS},
			{"hard_timeout_ms", e.HardTimeoutMS, p.HardTimeoutMS, op.HardTimeoutMS},
			{"cleanup_timeout_ms", e.CleanupTimeoutMS, p.CleanupTimeoutMS, op.CleanupTimeoutMS},
			{"request_timeout_ms", e.RequestTimeoutMS, p.RequestTimeoutMS, op.RequestTimeoutMS},
			{"client_timeout_ms", e.ClientTimeoutMS, p.ClientTimeoutMS, op.ClientTimeoutMS},
			{"memory_limit_bytes", e.MemoryLimitBytes, p.MemoryLimitBytes, op.MemoryLimitBytes},
		}
		for _, pr := range pairs {
			if pr.got <= 0 || pr.got > pr.plat || pr.got > pr.opVal {
				t.Fatalf("case %d: %s = %d, platform %d, operation %d", i, pr.name, pr.got, pr.plat, pr.opVal)
			}
		}
		if e.EngineTimeoutMS > e.SoftTimeoutMS || e.SoftTimeoutMS+e.OutputReserveMS > e.HardTimeoutMS ||
			e.ServerBoundMS() > e.RequestTimeoutMS || e.ClientTimeoutMS <= e.RequestTimeoutMS {
			t.Fatalf("case %d: incoherent effective policy %+v", i, e)
		}
	}
	if accepted == 0 {
		t.Fatal("no random operation was accepted: the generator tests nothing")
	}
}
