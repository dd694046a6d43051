package policy

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/toolerr"
)

func TestDefaultOperation(t *testing.T) {
	want := Operation{
		Name:              "value",
		Pure:              true,
		Deterministic:     false,
		Deduplication:     "none",
		MaxParameterBytes: 131_072, // 128 KiB
		MaxResultBytes:    262_144, // 256 KiB
		QueueTimeoutMS:    5_000,
		EngineTimeoutMS:   4_000,
		SoftTimeoutMS:     4_000,
		HardTimeoutMS:     5_000,
		CleanupTimeoutMS:  2_000,
		RequestTimeoutMS:  20_000,
		ClientTimeoutMS:   25_000,
		MemoryLimitBytes:  1_073_741_824, // 1 GiB
	}
	got := DefaultOperation("value")
	if got != want {
		t.Fatalf("DefaultOperation() =\n%+v\nwant\n%+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Fatalf("Validate() = %v", err)
	}
}

// checkOperationError asserts that err is an *OperationError for rule and
// field, matching sentinel and carrying invalid_operation_policy.
func checkOperationError(t *testing.T, err error, sentinel error, rule Rule, field string) *OperationError {
	t.Helper()
	var oe *OperationError
	if !errors.As(err, &oe) {
		t.Fatalf("error = %v, want *OperationError", err)
	}
	if !errors.Is(err, sentinel) {
		t.Errorf("errors.Is(%v, %v) = false", err, sentinel)
	}
	if oe.Rule != rule || oe.Field != field {
		t.Errorf("rule %q field %q, want %q %q (%v)", oe.Rule, oe.Field, rule, field, err)
	}
	var te *toolerr.Error
	if !errors.As(err, &te) {
		t.Fatalf("errors.As(%v, *toolerr.Error) = false", err)
	}
	if te.Code != toolerr.InvalidOperationPolicy || te.Retryable {
		t.Errorf("toolerr = %+v, want code %q, not retryable", te, toolerr.InvalidOperationPolicy)
	}
	if len(te.Issues) != 1 || te.Issues[0].Code != string(rule) {
		t.Errorf("issues = %+v, want one with code %q", te.Issues, rule)
	}
	if !strings.Contains(err.Error(), string(rule)) {
		t.Errorf("Error() = %q does not name rule %q", err, rule)
	}
	return oe
}

func TestOperationValidate(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(*Operation)
		sentinel error // nil when valid
		rule     Rule
		field    string
	}{
		{"default", func(*Operation) {}, nil, "", ""},
		{"deterministic", func(op *Operation) { op.Deterministic = true }, nil, "", ""},
		{"name of 64", func(op *Operation) { op.Name = "a" + strings.Repeat("b_9", 21) }, nil, "", ""},
		{"name with digits and underscores", func(op *Operation) { op.Name = "plan_2" }, nil, "", ""},
		{"empty name", func(op *Operation) { op.Name = "" }, ErrOperationName, RuleOperationName, "operation"},
		{"name of 65", func(op *Operation) { op.Name = "a" + strings.Repeat("b", 64) }, ErrOperationName, RuleOperationName, "operation"},
		{"upper-case name", func(op *Operation) { op.Name = "Plan" }, ErrOperationName, RuleOperationName, "operation"},
		{"leading digit", func(op *Operation) { op.Name = "1plan" }, ErrOperationName, RuleOperationName, "operation"},
		{"leading underscore", func(op *Operation) { op.Name = "_plan" }, ErrOperationName, RuleOperationName, "operation"},
		{"hyphen", func(op *Operation) { op.Name = "plan-a" }, ErrOperationName, RuleOperationName, "operation"},
		{"trailing newline", func(op *Operation) { op.Name = "plan\n" }, ErrOperationName, RuleOperationName, "operation"},
		{"non-ASCII", func(op *Operation) { op.Name = "plän" }, ErrOperationName, RuleOperationName, "operation"},
		{"impure", func(op *Operation) { op.Pure = false }, ErrImpure, RulePure, "pure"},
		{"empty deduplication", func(op *Operation) { op.Deduplication = "" }, ErrDeduplication, RuleDeduplicationNone, "deduplication"},
		{"input deduplication", func(op *Operation) { op.Deduplication = "input" }, ErrDeduplication, RuleDeduplicationNone, "deduplication"},
		{"None deduplication", func(op *Operation) { op.Deduplication = "None" }, ErrDeduplication, RuleDeduplicationNone, "deduplication"},
	}
	// Every int64 field, found by reflection, at zero and at -1.
	typ := reflect.TypeFor[Operation]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Type.Kind() != reflect.Int64 {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		for _, v := range []int64{0, -1} {
			tests = append(tests, struct {
				name     string
				mutate   func(*Operation)
				sentinel error
				rule     Rule
				field    string
			}{
				name:     tag + map[int64]string{0: " zero", -1: " negative"}[v],
				mutate:   func(op *Operation) { reflect.ValueOf(op).Elem().Field(i).SetInt(v) },
				sentinel: ErrNonPositiveLimit,
				rule:     RulePositive,
				field:    tag,
			})
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := DefaultOperation("plan")
			tt.mutate(&op)
			err := op.Validate()
			if tt.sentinel == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			oe := checkOperationError(t, err, tt.sentinel, tt.rule, tt.field)
			wantName := op.Name
			if tt.rule == RuleOperationName {
				wantName = ""
			}
			if oe.Operation != wantName {
				t.Errorf("Operation = %q, want %q", oe.Operation, wantName)
			}
		})
	}
}

func TestDecodeOperation(t *testing.T) {
	pac := DefaultOperation("plan")
	pac.Deterministic = true
	pac.MaxParameterBytes = 256 * KiB
	pac.MaxResultBytes = 512 * KiB

	tests := []struct {
		name string
		in   string
		want Operation
	}{
		{"name only takes every default", `{"operation":"value"}`, DefaultOperation("value")},
		{"overlay", `{"operation":"plan","deterministic":true,"max_parameter_bytes":262144,"max_result_bytes":524288}`, pac},
		{"explicit defaults", `{"pure":true,"deduplication":"none","operation":"value","deterministic":false}`, DefaultOperation("value")},
		{"whitespace", " \n{ \"operation\" : \"value\" }\n", DefaultOperation("value")},
		{"every field", `{"operation":"x","pure":true,"deterministic":true,"deduplication":"none",
			"max_parameter_bytes":1,"max_result_bytes":2,"queue_timeout_ms":3,"engine_timeout_ms":4,
			"soft_timeout_ms":5,"hard_timeout_ms":6,"cleanup_timeout_ms":7,"request_timeout_ms":8,
			"client_timeout_ms":9,"memory_limit_bytes":10}`,
			Operation{Name: "x", Pure: true, Deterministic: true, Deduplication: "none", MaxParameterBytes: 1, MaxResultBytes: 2, QueueTimeoutMS: 3, EngineTimeoutMS: 4, SoftTimeoutMS: 5, HardTimeoutMS: 6, CleanupTimeoutMS: 7, RequestTimeoutMS: 8, ClientTimeoutMS: 9, MemoryLimitBytes: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeOperation([]byte(tt.in))
			if err != nil {
				t.Fatalf("DecodeOperation() = %v", err)
			}
			if got != tt.want {
				t.Errorf("DecodeOperation() =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestDecodeOperationRefusals(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		sentinel error
		rule     Rule
		field    string
	}{
		{"empty", ``, ErrDeclaration, RuleDeclaration, ""},
		{"array", `[]`, ErrDeclaration, RuleDeclaration, ""},
		{"string", `"plan"`, ErrDeclaration, RuleDeclaration, ""},
		{"null", `null`, ErrDeclaration, RuleDeclaration, ""},
		{"truncated", `{"operation":"plan"`, ErrDeclaration, RuleDeclaration, ""},
		{"bad value", `{"operation":plan}`, ErrDeclaration, RuleDeclaration, ""},
		{"trailing object", `{"operation":"plan"}{}`, ErrDeclaration, RuleDeclaration, ""},
		{"trailing garbage", `{"operation":"plan"} x`, ErrDeclaration, RuleDeclaration, ""},
		{"missing operation", `{"pure":true}`, ErrDeclaration, RuleDeclaration, "operation"},
		{"empty object", `{}`, ErrDeclaration, RuleDeclaration, "operation"},
		{"name key is not operation", `{"name":"plan"}`, ErrDeclaration, RuleDeclaration, "name"},
		{"unknown field", `{"operation":"plan","cache":true}`, ErrDeclaration, RuleDeclaration, "cache"},
		{"unknown field redacted", `{"operation":"plan","a b":1}`, ErrDeclaration, RuleDeclaration, toolerr.RedactedSegment},
		{"case-folded field", `{"operation":"plan","Pure":true}`, ErrDeclaration, RuleDeclaration, "Pure"},
		{"repeated field", `{"operation":"plan","pure":true,"pure":false}`, ErrDeclaration, RuleDeclaration, ""},
		{"escaped repeat", `{"operation":"plan","\u0070ure":true,"pure":true}`, ErrDeclaration, RuleDeclaration, ""},
		{"null field", `{"operation":"plan","engine_timeout_ms":null}`, ErrDeclaration, RuleDeclaration, "engine_timeout_ms"},
		{"string for number", `{"operation":"plan","engine_timeout_ms":"4000"}`, ErrDeclaration, RuleDeclaration, "engine_timeout_ms"},
		{"fraction", `{"operation":"plan","engine_timeout_ms":4000.5}`, ErrDeclaration, RuleDeclaration, "engine_timeout_ms"},
		{"out of range", `{"operation":"plan","memory_limit_bytes":9223372036854775808}`, ErrDeclaration, RuleDeclaration, "memory_limit_bytes"},
		{"string for bool", `{"operation":"plan","pure":"true"}`, ErrDeclaration, RuleDeclaration, "pure"},
		{"number for name", `{"operation":1}`, ErrDeclaration, RuleDeclaration, "operation"},
		{"empty name", `{"operation":""}`, ErrOperationName, RuleOperationName, "operation"},
		{"bad name", `{"operation":"Plan"}`, ErrOperationName, RuleOperationName, "operation"},
		{"impure", `{"operation":"plan","pure":false}`, ErrImpure, RulePure, "pure"},
		{"deduplicated", `{"operation":"plan","deduplication":"input"}`, ErrDeduplication, RuleDeduplicationNone, "deduplication"},
		{"zero limit", `{"operation":"plan","hard_timeout_ms":0}`, ErrNonPositiveLimit, RulePositive, "hard_timeout_ms"},
		{"negative limit", `{"operation":"plan","max_result_bytes":-1}`, ErrNonPositiveLimit, RulePositive, "max_result_bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeOperation([]byte(tt.in))
			if err == nil {
				t.Fatalf("DecodeOperation() = %+v, want error", got)
			}
			if got != (Operation{}) {
				t.Errorf("DecodeOperation() returned %+v with its error, want zero", got)
			}
			checkOperationError(t, err, tt.sentinel, tt.rule, tt.field)
		})
	}
}
