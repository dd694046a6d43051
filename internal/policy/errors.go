package policy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/toolhost/toolhost/internal/toolerr"
)

var (
	// ErrIncoherent is returned when a Platform breaks one of its coherence
	// rules; the error is a *CoherenceError naming the rule.
	ErrIncoherent = errors.New("policy: incoherent platform policy")

	// ErrDeclaration is returned when an operation declaration is not one
	// JSON object of known, distinct, non-null, well-typed fields including
	// "operation".
	ErrDeclaration = errors.New("policy: malformed operation declaration")

	// ErrOperationName is returned when an operation name does not match
	// [a-z][a-z0-9_]* or is longer than 64 characters.
	ErrOperationName = errors.New("policy: invalid operation name")

	// ErrImpure is returned when an operation does not declare pure=true.
	ErrImpure = errors.New("policy: operation is not pure")

	// ErrDeduplication is returned when an operation's deduplication is not
	// "none".
	ErrDeduplication = errors.New(`policy: operation deduplication is not "none"`)

	// ErrNonPositiveLimit is returned when an operation limit is zero or
	// negative.
	ErrNonPositiveLimit = errors.New("policy: non-positive operation limit")

	// ErrSoftDeadline is returned when the clamped soft deadline of an
	// operation is not positive: its hard deadline leaves no time once the
	// platform's output reserve is taken.
	ErrSoftDeadline = errors.New("policy: clamped soft deadline is not positive")

	// ErrServerBound is returned when the clamped server bound (ingress +
	// queue + hard + cleanup + response reserve) exceeds the clamped request
	// deadline.
	ErrServerBound = errors.New("policy: server bound exceeds request deadline")

	// ErrClientDeadline is returned when the clamped client deadline does not
	// exceed the clamped request deadline.
	ErrClientDeadline = errors.New("policy: client deadline does not exceed request deadline")
)

// Rule is the stable identifier of a policy rule. Its string form appears in
// error messages and as the issue code of an operation refusal.
type Rule string

// Platform coherence rules, checked by [Platform.Validate] in this order.
// RulePositive, RuleServerBound and RuleClientAfterRequest are also
// operation rules.
const (
	// RulePositive: every limit is greater than zero.
	RulePositive Rule = "positive"
	// RuleEngineWithinSoft: engine ≤ soft.
	RuleEngineWithinSoft Rule = "engine_within_soft"
	// RuleSoftWithinHard: soft + output reserve ≤ hard.
	RuleSoftWithinHard Rule = "soft_within_hard"
	// RuleServerBound: ingress + queue + hard + cleanup + response reserve ≤
	// request.
	RuleServerBound Rule = "server_bound_within_request"
	// RuleClientAfterRequest: client > request.
	RuleClientAfterRequest Rule = "client_after_request"
	// RuleRequestBodyFitsBatch: max batch items × max parameter bytes +
	// envelope reserve ≤ request body cap.
	RuleRequestBodyFitsBatch Rule = "request_body_fits_batch"
	// RuleResponseBodyFitsBatch: max batch items × max result bytes +
	// envelope reserve ≤ response body cap.
	RuleResponseBodyFitsBatch Rule = "response_body_fits_batch"
	// RuleBatchWithinPrincipal: max batch items ≤ pending items per
	// principal, so that one full batch can be admitted.
	RuleBatchWithinPrincipal Rule = "batch_within_principal_pending"
	// RulePrincipalWithinProcess: pending items per principal ≤ pending items
	// per process, so that one principal's allowance can be admitted.
	RulePrincipalWithinProcess Rule = "principal_within_process_pending"
)

// Operation rules, checked by [DecodeOperation], [Operation.Validate] and
// [Clamp], besides RulePositive, RuleServerBound and RuleClientAfterRequest.
const (
	// RuleDeclaration: a declaration is one JSON object of known, distinct,
	// non-null, well-typed fields including "operation".
	RuleDeclaration Rule = "declaration"
	// RuleOperationName: the name matches [a-z][a-z0-9_]*, ≤ 64 characters.
	RuleOperationName Rule = "operation_name"
	// RulePure: pure is true.
	RulePure Rule = "pure"
	// RuleDeduplicationNone: deduplication is "none".
	RuleDeduplicationNone Rule = "deduplication_none"
	// RuleSoftPositive: the clamped soft deadline is positive.
	RuleSoftPositive Rule = "soft_deadline_positive"
)

// CoherenceError reports the first coherence rule a Platform breaks.
// errors.Is(err, ErrIncoherent) holds for it.
type CoherenceError struct {
	Rule Rule
	// Field is the JSON field name for RulePositive, otherwise "".
	Field string
	// Detail states the values involved.
	Detail string
}

// Error returns the rule and the values involved.
func (e *CoherenceError) Error() string {
	return fmt.Sprintf("policy: incoherent platform: %s: %s", e.Rule, e.Detail)
}

// Unwrap returns ErrIncoherent.
func (e *CoherenceError) Unwrap() error { return ErrIncoherent }

// OperationError reports why an operation declaration or its clamp was
// refused. errors.Is matches its sentinel (ErrImpure, ErrServerBound, ...),
// and errors.As finds a *toolerr.Error with code invalid_operation_policy
// whose one issue has the rule as its code and the field as its path.
type OperationError struct {
	// Operation is the operation's name when it is a valid name, else "".
	Operation string
	Rule      Rule
	// Field is the JSON field the rule is about, or "". An unknown field
	// that is not a plain name is replaced by toolerr.RedactedSegment.
	Field string
	// Detail states the values involved. It contains no declaration text
	// other than known field names and numbers.
	Detail string

	sentinel error
	code     *toolerr.Error
}

func newOperationError(name string, sentinel error, rule Rule, field, format string, args ...any) *OperationError {
	if !validName(name) {
		name = ""
	}
	var path []string
	if field != "" {
		path = []string{field}
	}
	issue := toolerr.NewIssue(string(rule), path...)
	if field != "" {
		field = issue.Path[0]
	}
	return &OperationError{
		Operation: name,
		Rule:      rule,
		Field:     field,
		Detail:    fmt.Sprintf(format, args...),
		sentinel:  sentinel,
		code:      toolerr.New(toolerr.InvalidOperationPolicy, issue),
	}
}

// Error returns the operation, the rule and the values involved.
func (e *OperationError) Error() string {
	var b strings.Builder
	b.WriteString("policy: operation")
	if e.Operation != "" {
		fmt.Fprintf(&b, " %q", e.Operation)
	}
	fmt.Fprintf(&b, ": %s", e.Rule)
	if e.Field != "" {
		fmt.Fprintf(&b, " (%s)", e.Field)
	}
	fmt.Fprintf(&b, ": %s", e.Detail)
	return b.String()
}

// Unwrap returns the sentinel and the invalid_operation_policy platform
// error.
func (e *OperationError) Unwrap() []error { return []error{e.sentinel, e.code} }
