// Package registry discovers tool packages — the .wasm modules of the
// tools folder and the packages compiled into the binary ([Builtin]) — and
// publishes them as immutable, code-sorted [Snapshot] generations that the
// catalogue and the executor read.
//
// # Discovery is a transaction
//
// Each discovery considers every package at once:
//
//  1. Every module is loaded and described (package wasmtool); every
//     builtin declaration is decoded (package tooldef). Each package
//     expands into its declared services, each a claim on a tool code
//     attributed to its package's file.
//  2. Tool codes are counted across all claims, refused services
//     included. Every claimant of a code claimed more than once is
//     quarantined: there is no first-wins or last-wins.
//  3. Each claim gets one reason, in priority order: duplicate_code, then
//     import_failed (the package as a whole failed: the module did not
//     compile, its imports were refused, describe failed, the declaration
//     was refused), then definition validation — reserved_code for a
//     route word (catalog, compute, diagnostics), definition_invalid for
//     every other refusal, with tooldef's reason as the Detail. A package
//     that failed as a whole makes no claim and publishes nothing; its
//     tool codes are not readable (wasmtool does not expose them), so it
//     cannot quarantine a healthy claimant of the same code.
//  4. One refused service does not hide a healthy sibling. A service
//     whose operation policy cannot be clamped to the platform is
//     published with Unavailable set (invalid_operation_policy) and no
//     effective policies; the others carry the effective policy of every
//     operation.
//  5. The result is published atomically as the next generation. A
//     published snapshot never changes; nothing registers after it.
//
// Failures are sanitised: the file is "<name>.wasm" or "builtin/<name>",
// never a path; the reason is one of the Reason constants and the detail a
// stable code. The full error, with the path, goes to the operator's log.
//
// # The live folder
//
// Unless Config.Static, the registry watches the tools folder (fsnotify)
// and rescans it every Config.Interval in case an event was missed. A scan
// only stats files; a module is read when its stamp (size and modification
// time of the module and of its sidecar) changed, and loaded only when its
// content (SHA-256 of module and sidecar) changed: a touched or re-copied
// module keeps its loaded Tool. Adding, replacing or removing a module
// publishes a new generation; a scan that finds nothing new publishes
// nothing.
//
// # Bounded loading
//
// A scan only stats files; each new or changed settled file is loaded on
// its own goroutine, off r.mu, within a bound on loads holding file bytes,
// and wasmtool bounds the loads and reads that run at once (abandoned ones
// included) and gives each phase its own deadline. A file is read only
// when it is a regular file within its size limit, checked on the opened
// descriptor before reading. A load records its outcome when it ends and
// publishes, unless a synchronous discovery is waiting for it: Open and
// Reload wait up to Config.LoadWait, a live rescan up to Config.BatchWait,
// then publish what is ready. So one slow module delays only itself, and
// Close returns within its context whatever a load is doing. A load whose
// file is replaced or removed has its context ended. [Registry.Loading]
// lists the loads in progress, each with the phase the loader reports
// (a [LoadObserver]), and the abandoned ones until their work gives its
// slot back; it has its own lock, so reading it never waits for a scan.
//
// # The loader seam
//
// The registry holds its loader through [Loader], declared here with what
// the registry calls, and the modules it loads through [LoadedModule]; it
// reads a loader's refusal through [LoadRefusal]. *wasmtool.Loader
// implements them; the registry imports nothing of package wasmtool.
//
// # The settle rule
//
// A file is read only once it has settled: its stamp has not changed for
// Config.Settle, or its modification time is already Settle in the past.
// A write in progress is therefore not read, and a module that was read
// half-written anyway (a writer that paused) fails, is reported, and is
// loaded again as soon as the rest of its bytes change its stamp. Writers
// should still write to a temporary name — one not ending in .wasm, or
// starting with a dot — and rename it into place: a rename is atomic.
// While a replaced file settles, its previous version stays published.
//
// # Generations and running items
//
// An item runs on the generation it started on. A module dropped by a new
// generation is retired: its running items finish, new items on it are
// refused with version_mismatch (retryable: resolve the service in the
// current snapshot), and its Tool is closed when the last item ends.
// Close retires everything and waits for the running items.
package registry
