package policy

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestDefaultPlatform(t *testing.T) {
	want := Platform{
		MaxBatchItems:                    4,
		WorkerLanes:                      2,
		MaxPendingItemsPerProcess:        8,
		MaxConcurrentBatchesPerPrincipal: 1,
		MaxPendingItemsPerPrincipal:      4,
		MaxRequestBodyBytes:              1_048_576, // 1 MiB
		MaxResponseBodyBytes:             1_114_112, // 1,088 KiB = 4 × 256 KiB + 64 KiB
		EnvelopeReserveBytes:             65_536,    // 64 KiB
		MaxParameterBytes:                131_072,   // 128 KiB
		MaxResultBytes:                   262_144,   // 256 KiB
		MaxJSONDepth:                     32,
		IngressTimeoutMS:                 2_000,
		QueueTimeoutMS:                   5_000,
		EngineTimeoutMS:                  30_000,
		SoftTimeoutMS:                    44_000,
		HardTimeoutMS:                    45_000,
		OutputReserveMS:                  1_000,
		CleanupTimeoutMS:                 5_000,
		ResponseReserveMS:                2_000,
		RequestTimeoutMS:                 59_000,
		ClientTimeoutMS:                  65_000,
		MemoryLimitBytes:                 1_073_741_824, // 1 GiB
	}
	got := DefaultPlatform()
	if got != want {
		t.Fatalf("DefaultPlatform() =\n%+v\nwant\n%+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Fatalf("DefaultPlatform().Validate() = %v", err)
	}
	if b := got.ServerBoundMS(); b != 59_000 || b != got.RequestTimeoutMS {
		t.Errorf("ServerBoundMS() = %d, want 59000 = request_timeout_ms", b)
	}
	if MinBatchItems != 1 {
		t.Errorf("MinBatchItems = %d, want 1", MinBatchItems)
	}
}

// TestPlatformPositive sets every field, found by reflection so that a new
// field cannot be forgotten, to zero and to -1.
func TestPlatformPositive(t *testing.T) {
	typ := reflect.TypeFor[Platform]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		for _, v := range []int64{0, -1} {
			t.Run(tag+"="+map[int64]string{0: "0", -1: "-1"}[v], func(t *testing.T) {
				p := DefaultPlatform()
				reflect.ValueOf(&p).Elem().Field(i).SetInt(v)
				err := p.Validate()
				var ce *CoherenceError
				if !errors.As(err, &ce) {
					t.Fatalf("Validate() = %v, want *CoherenceError", err)
				}
				if ce.Rule != RulePositive || ce.Field != tag {
					t.Errorf("rule %q field %q, want %q %q", ce.Rule, ce.Field, RulePositive, tag)
				}
				if !errors.Is(err, ErrIncoherent) {
					t.Errorf("errors.Is(%v, ErrIncoherent) = false", err)
				}
			})
		}
	}
}

func TestPlatformCoherence(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Platform)
		want   Rule // "" when p stays coherent
	}{
		{"defaults", func(*Platform) {}, ""},
		{"engine equals soft", func(p *Platform) { p.EngineTimeoutMS = 44_000 }, ""},
		{"engine over soft", func(p *Platform) { p.EngineTimeoutMS = 44_001 }, RuleEngineWithinSoft},
		{"soft plus reserve over hard", func(p *Platform) { p.SoftTimeoutMS = 44_001 }, RuleSoftWithinHard},
		{"output reserve over hard slack", func(p *Platform) { p.OutputReserveMS = 1_001 }, RuleSoftWithinHard},
		{"request one ms short", func(p *Platform) { p.RequestTimeoutMS = 58_999 }, RuleServerBound},
		{"ingress one ms long", func(p *Platform) { p.IngressTimeoutMS = 2_001 }, RuleServerBound},
		{"queue one ms long", func(p *Platform) { p.QueueTimeoutMS = 5_001 }, RuleServerBound},
		{"cleanup one ms long", func(p *Platform) { p.CleanupTimeoutMS = 5_001 }, RuleServerBound},
		{"response reserve one ms long", func(p *Platform) { p.ResponseReserveMS = 2_001 }, RuleServerBound},
		{"hard saturates the bound", func(p *Platform) { p.HardTimeoutMS = math.MaxInt64 }, RuleServerBound},
		{"request with slack", func(p *Platform) { p.RequestTimeoutMS = 60_000 }, ""},
		{"client equals request", func(p *Platform) { p.ClientTimeoutMS = 59_000 }, RuleClientAfterRequest},
		{"client under request", func(p *Platform) { p.ClientTimeoutMS = 30_000 }, RuleClientAfterRequest},
		{"request body exactly fits", func(p *Platform) { p.MaxRequestBodyBytes = 4*128*KiB + 64*KiB }, ""},
		{"request body one byte short", func(p *Platform) { p.MaxRequestBodyBytes = 4*128*KiB + 64*KiB - 1 }, RuleRequestBodyFitsBatch},
		{"parameters too large", func(p *Platform) { p.MaxParameterBytes = 240*KiB + 1 }, RuleRequestBodyFitsBatch},
		{"parameters overflow", func(p *Platform) { p.MaxParameterBytes = math.MaxInt64 }, RuleRequestBodyFitsBatch},
		{"envelope too large", func(p *Platform) { p.EnvelopeReserveBytes = 512*KiB + 1 }, RuleRequestBodyFitsBatch},
		{"response body one byte short", func(p *Platform) { p.MaxResponseBodyBytes = 1088*KiB - 1 }, RuleResponseBodyFitsBatch},
		{"results too large", func(p *Platform) { p.MaxResultBytes = 256*KiB + 1 }, RuleResponseBodyFitsBatch},
		{"results overflow", func(p *Platform) { p.MaxResultBytes = math.MaxInt64 }, RuleResponseBodyFitsBatch},
		{"batch over principal pending", func(p *Platform) { p.MaxPendingItemsPerPrincipal = 3 }, RuleBatchWithinPrincipal},
		{"principal pending over process pending", func(p *Platform) { p.MaxPendingItemsPerProcess = 3 }, RulePrincipalWithinProcess},
		{"one lane", func(p *Platform) { p.WorkerLanes = 1 }, ""},
		{"single-item batches", func(p *Platform) { p.MaxBatchItems = 1 }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultPlatform()
			tt.mutate(&p)
			err := p.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var ce *CoherenceError
			if !errors.As(err, &ce) {
				t.Fatalf("Validate() = %v, want *CoherenceError", err)
			}
			if ce.Rule != tt.want {
				t.Errorf("rule = %q, want %q (%v)", ce.Rule, tt.want, err)
			}
			if !errors.Is(err, ErrIncoherent) {
				t.Errorf("errors.Is(%v, ErrIncoherent) = false", err)
			}
			if !strings.Contains(err.Error(), string(tt.want)) {
				t.Errorf("Error() = %q does not name rule %q", err, tt.want)
			}
		})
	}
}
