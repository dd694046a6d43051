// Package run is the application layer: what a run, a batch and a job of
// a tool are, for every surface — the seed-000 compute route, the ADR-027
// run route, the jobs and legacy routes, and `toolhost run`.
//
// A surface resolves its caller once ([App.Resolve]) and hands the run
// layer decoded documents. The layer then, in one place:
//
//   - finds the tool in the live snapshot and reads its runtime view
//     (availability, platform fields, the compiled input schema);
//   - admits the run with the guard, which alone decides per-caller
//     concurrency and quotas by tier and quota class, and records refused
//     and reported decisions in the abuse log and the metrics;
//   - turns the input into one executor item: encoded once, validated
//     once against the compiled schema, pinned to the live definition,
//     with its operation named, so that nothing below decodes it again;
//   - runs it through the executor, which keeps only process capacity
//     (lanes, pending items, the queue deadline) and, for the seed-000
//     compute route alone, the spec's per-principal batch limits;
//   - maps the outcome to a typed value: a [Result] for a run that
//     happened (succeeded, or failed with the tool's own error), a
//     [*Refusal] with a stable [Code] and, where waiting helps, a
//     retry-after for a run that did not.
//
// Nothing here knows HTTP: the routes map a Refusal to their answer
// dialect (seed-000 envelope, ADR-027 problem+json, legacy), each in one
// file.
package run
