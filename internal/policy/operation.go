package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/toolhost/toolhost/internal/wire"
)

// DeduplicationNone is the only deduplication an operation may declare:
// every item runs on its own, with no coalescing or cache.
const DeduplicationNone = "none"

// MaxOperationNameLen is the longest operation name, in bytes.
const MaxOperationNameLen = 64

// Operation is the policy a tool declares for one operation. Its limits are
// requests: [Clamp] caps each one to the platform. Determinism metadata does
// not enable caching or shared execution.
type Operation struct {
	// Name matches [a-z][a-z0-9_]*, at most 64 characters.
	Name string `json:"operation"`
	// Pure must be true.
	Pure          bool `json:"pure"`
	Deterministic bool `json:"deterministic"`
	// Deduplication must be DeduplicationNone.
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
}

// DefaultOperation returns the operation named name with the model's
// defaults: 4 s engine and soft, 5 s hard, 5 s queue, 2 s cleanup, 20 s
// request, 25 s client, 128 KiB parameters, 256 KiB results, 1 GiB memory,
// pure, not deterministic, deduplication "none". An operation that needs
// longer budgets must declare them.
func DefaultOperation(name string) Operation {
	return Operation{
		Name:              name,
		Pure:              true,
		Deterministic:     false,
		Deduplication:     DeduplicationNone,
		MaxParameterBytes: 128 * KiB,
		MaxResultBytes:    256 * KiB,
		QueueTimeoutMS:    5_000,
		EngineTimeoutMS:   4_000,
		SoftTimeoutMS:     4_000,
		HardTimeoutMS:     5_000,
		CleanupTimeoutMS:  2_000,
		RequestTimeoutMS:  20_000,
		ClientTimeoutMS:   25_000,
		MemoryLimitBytes:  1 * GiB,
	}
}

func (op Operation) limits() []limit {
	return []limit{
		{"max_parameter_bytes", op.MaxParameterBytes},
		{"max_result_bytes", op.MaxResultBytes},
		{"queue_timeout_ms", op.QueueTimeoutMS},
		{"engine_timeout_ms", op.EngineTimeoutMS},
		{"soft_timeout_ms", op.SoftTimeoutMS},
		{"hard_timeout_ms", op.HardTimeoutMS},
		{"cleanup_timeout_ms", op.CleanupTimeoutMS},
		{"request_timeout_ms", op.RequestTimeoutMS},
		{"client_timeout_ms", op.ClientTimeoutMS},
		{"memory_limit_bytes", op.MemoryLimitBytes},
	}
}

// Validate reports the first rule op breaks as an *OperationError: the name
// (ErrOperationName), pure (ErrImpure), deduplication (ErrDeduplication),
// then each limit in field order (ErrNonPositiveLimit). It does not relate
// the limits to each other: [Clamp] caps engine and soft instead of refusing
// them.
func (op Operation) Validate() error {
	if !validName(op.Name) {
		return newOperationError(op.Name, ErrOperationName, RuleOperationName, "operation",
			"name of %d bytes does not match [a-z][a-z0-9_]* of at most %d", len(op.Name), MaxOperationNameLen)
	}
	if !op.Pure {
		return newOperationError(op.Name, ErrImpure, RulePure, "pure", "pure is false")
	}
	if op.Deduplication != DeduplicationNone {
		return newOperationError(op.Name, ErrDeduplication, RuleDeduplicationNone, "deduplication", `deduplication is not "none"`)
	}
	for _, l := range op.limits() {
		if l.value <= 0 {
			return newOperationError(op.Name, ErrNonPositiveLimit, RulePositive, l.field, "%s is %d", l.field, l.value)
		}
	}
	return nil
}

func validName(s string) bool {
	if s == "" || len(s) > MaxOperationNameLen || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// operationFields is the set of JSON field names of Operation.
var operationFields = func() map[string]bool {
	m := make(map[string]bool)
	t := reflect.TypeFor[Operation]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		m[name] = true
	}
	return m
}()

// DecodeOperation decodes one operation declaration: a JSON object whose
// fields overlay [DefaultOperation], so a field the declaration omits keeps
// the model default. "operation" is required. Field names match exactly
// (not case-insensitively); an unknown, repeated or null field, a wrong type
// or trailing data is refused with ErrDeclaration. The result is checked with
// [Operation.Validate]. Every error is an *OperationError.
func DecodeOperation(data []byte) (Operation, error) {
	if err := checkDeclaration(data); err != nil {
		return Operation{}, err
	}
	op := DefaultOperation("")
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&op); err != nil {
		field := ""
		if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) && operationFields[te.Field] {
			field = te.Field
		}
		return Operation{}, newOperationError("", ErrDeclaration, RuleDeclaration, field, "a field has the wrong type")
	}
	if err := op.Validate(); err != nil {
		return Operation{}, err
	}
	return op, nil
}

// checkDeclaration decodes data strictly with [wire.Decode] (which refuses
// repeated names, escaped or not, and trailing data) and checks its top
// level: one object whose keys are known and not null, with "operation"
// among them. It leaves typing to encoding/json.
func checkDeclaration(data []byte) error {
	refuse := func(field, detail string) error {
		return newOperationError("", ErrDeclaration, RuleDeclaration, field, "%s", detail)
	}
	v, err := wire.Decode(data, wire.Limits{})
	if err != nil {
		return refuse("", "not strict JSON")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return refuse("", "not a JSON object")
	}
	for _, key := range slices.Sorted(maps.Keys(obj)) {
		if !operationFields[key] {
			// The key is declaration text: NewIssue redacts it unless it is
			// a plain name, and Detail never repeats it.
			return refuse(key, "unknown field")
		}
		if obj[key] == nil {
			return refuse(key, "null field")
		}
	}
	if _, ok := obj["operation"]; !ok {
		return refuse("operation", "missing operation")
	}
	return nil
}
