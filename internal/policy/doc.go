// Package policy holds the platform policy, the operation policies tools
// declare, and the clamp that turns the two into the effective policy the
// catalogue publishes and the executor enforces.
//
// All durations are int64 milliseconds and all sizes int64 bytes; the unit is
// in every Go field name and JSON field name (engine_timeout_ms,
// memory_limit_bytes).
//
// The package guarantees:
//
//   - [DefaultPlatform] returns exactly the contract's platform defaults, and
//     [Platform.Validate] accepts a platform only when every value is positive
//     and its budgets and byte caps fit together (see the Rule constants). A
//     refusal is a [*CoherenceError] naming the broken rule.
//   - [DefaultOperation] returns the contract's operation defaults;
//     [Operation.Validate] accepts only a pure operation with deduplication
//     "none", a valid name and positive limits; [DecodeOperation] overlays a
//     JSON declaration on those defaults and refuses anything but one object
//     of known, distinct, non-null fields.
//   - [Clamp] returns an [Effective] policy whose every limit is at most both
//     the platform's and the operation's, with 0 < engine ≤ soft,
//     soft + output reserve ≤ hard, ingress + queue + hard + cleanup +
//     response reserve ≤ request < client. Otherwise it refuses.
//   - Every refusal about an operation is an [*OperationError]: errors.Is
//     matches its sentinel (ErrImpure, ErrServerBound, ...) and errors.As
//     finds a [*toolerr.Error] with code invalid_operation_policy.
//
// Values are plain structs: copy them freely; nothing here is shared or
// mutable, and every function is safe for concurrent use.
package policy
