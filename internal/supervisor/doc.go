// Package supervisor runs the items of native tool packages (package
// native) in worker processes that it owns from spawn to confirmed
// cleanup: one worker per item, never reused — a spare started ahead of
// the item when one is ready, else a fresh one. It is the native engine
// behind [engine.Runner]; the WASM engine is package wasmtool.
//
// A [Supervisor] is made once per server process with [New], which
// detects the memory mode, reaps the job cgroups a previous run left
// behind and starts Config.Spares spare workers. [Supervisor.Runner]
// returns the Runner of one package; [Supervisor.Stats] counts jobs and
// spares; [Supervisor.Close] kills every running job's process tree and
// every spare and confirms them gone. The worker side is [WorkerMain],
// the hidden "toolhost worker" entry point of the same binary.
//
// # Protocol
//
// The supervisor starts the worker (by default /proc/self/exe worker) in a
// new session (setsid: its pid is its process group and session id), with
// stdin and stdout on /dev/null, stderr on a pipe the supervisor keeps the
// head of for its log, the environment variable [EnvWorkerID] (a random
// id of this worker: a spare is started before its item exists, so the
// environment never holds an execution id), and two pipes: fd 3, which
// the worker reads (the ACK and the job), and fd 4, which it writes (the
// ready frame, the Taken byte and the result frame). The worker decodes its own packages'
// declarations and compiles their schemas. Then:
//
//  1. The worker sends its ready frame: protocol version ([Protocol], 3),
//     worker id, pid, process group id and start time (field 22 of
//     /proc/self/stat).
//  2. The supervisor checks every field against the kernel: the worker
//     id is the one it gave, the pid is its own unreaped child's, the
//     process group is the pid, /proc/<pid>/stat shows the supervisor as
//     parent, the pid as group and session, and the start time it read
//     itself at spawn. A reused pid cannot pass: its start time differs.
//     A spare is verified here and then waits, blocked on its read of the
//     ACK, until an item takes it (see Spare workers).
//  3. The hand-off: in the cgroup modes the supervisor makes the job's
//     cgroup with the job's memory limit and places the worker in it (a
//     spare waits in a job cgroup of its own already, placed there after
//     its ready frame under [SpareMemoryLimitBytes]: the job's limit
//     replaces that one and the peak and failure counts are reset), and
//     starts the memory monitor; only then does it write the ACK, the
//     single byte 0x00, followed by the job frame, in one write. The job
//     frame is where the worker learns the execution id. The worker
//     answers at once with the [Taken] byte, 0x01, before it starts on
//     the job.
//  4. The worker re-checks the identity pins (tool code, contract version,
//     implementation version, schema fingerprint) against its own decoding
//     of the package declarations (version_mismatch), bounds and validates
//     the parameters against the input schema (input_limit_exceeded,
//     invalid_parameters), runs Package.Compute with a native.Context (the
//     soft deadline, the engine budget, a context ending at the hard
//     deadline), validates the output against the output schema
//     (invalid_output), encodes it canonically within max_result_bytes
//     (output_limit_exceeded), checks the hard deadline
//     (execution_timeout), and sends the result frame with its measured
//     phases. It then waits for the supervisor to end it.
//
// A result frame is not a cleanup acknowledgement: the supervisor cleans
// up after every outcome.
//
// # Frames
//
// A frame is a 4-byte big-endian length n, then n bytes of one strict JSON
// object (no duplicate names, valid UTF-8, no unknown member) whose
// "frame" member names its kind. A zero length, a length past the frame's
// bound, a stream that ends inside a frame, or a payload that is not the
// object of its kind is a protocol violation. The supervisor reads each
// frame by its length and never waits for the end of the stream, so a
// descendant that keeps fd 4 open cannot hold it.
//
//	ready  (≤ 1 KiB)  {"frame":"ready","protocol":2,"worker_id":…,"pid":…,"pgid":…,"start_time":…}
//	job    (≤ 16 MiB) {"frame":"job","execution_id":…,"package":…,"tool_code":…,
//	                   "contract_version":…,"implementation_version":…,"schema_fingerprint":…,
//	                   "operation":…,"policy":{…effective policy…},
//	                   "soft_deadline_ns":…,"hard_deadline_ns":…,"parameters":{…}}
//	result (≤ max_result_bytes + 64 KiB)
//	                  {"frame":"result","execution_id":…,"result":{…} | "error":{code,retryable,message,issues,issue_count},
//	                   "phases_ns":{"input_validation":…,"compute":…,"output_validation":…,"serialization":…}}
//
// Deadlines are absolute CLOCK_MONOTONIC readings in nanoseconds, one
// clock for every process of the host. The parameters and the result are
// embedded verbatim. A phase the worker did not reach is null. The result
// frame names the job frame's execution id, which the supervisor checks.
//
// The supervisor trusts the result frame no more than the worker: it
// decodes the result strictly, validates it against its own copy of the
// output schema and re-encodes it canonically; it keeps an error to the
// codes a worker may send (a platform-only code such as memory_limit or
// worker_crashed becomes execution_failed, an unknown one is a protocol
// violation), sanitises its issues again and cuts its message to 512
// bytes.
//
// # Outcomes
//
// Garbage, an oversized frame, a refused ready frame, or a worker that ends
// without a result frame (exit, signal, panic) is worker_crashed, logged
// with the worker's exit status and stderr. The hard deadline, with or
// without a ready frame (the hard budget includes startup, from the
// item's start: the spawn of a fresh worker, the hand-off of a spare), is
// execution_timeout. A memory breach is memory_limit. A context cancelled
// for another reason than its deadline (the client left, the executor or
// the supervisor shut down) is service_unavailable. None of them is ever
// turned into a domain answer.
//
// # Memory modes
//
// New picks the strongest mode the host provides, or checks the one
// Config.MemoryMode forces:
//
//   - cgroup_v2_hard: a delegated cgroup2 subtree whose memory controller
//     is available. Each job gets memory.max = the operation's
//     memory_limit_bytes, memory.swap.max = 0, memory.oom.group = 1 and
//     pids.max; a breach is an oom_kill in memory.events; the peak is
//     memory.peak.
//   - cgroup_v1_hard: the v1 memory controller, writable (the usual hybrid
//     host). Each job gets memory.limit_in_bytes and, where swap is
//     accounted, an equal memory.memsw.limit_in_bytes, a pids.max in the
//     v1 pids hierarchy and a cgroup in the freezer hierarchy where those
//     exist; a breach is a rise of oom_kill in memory.oom_control (or,
//     without that counter, a worker killed by a SIGKILL the supervisor did
//     not send in a cgroup whose failcnt rose); the peak is
//     memory.max_usage_in_bytes. The whole tree is then killed.
//   - process_tree_observed: no writable memory controller. The supervisor
//     sums the resident memory of the worker's tree from /proc at most
//     20 ms apart (the contract asks for at most 50 ms) and kills the tree
//     when the sum passes the limit; the peak is the largest sum sampled.
//     There is no pids limit.
//   - unavailable: no /proc, or not Linux. Every item is refused with
//     service_unavailable (not retryable).
//
// Job cgroups live under Config.CgroupParent (default "toolhost", below
// the server's own cgroup in each hierarchy), in one instance directory
// per supervisor named <pid>-<start time>-<n>, one job directory per item.
// New reaps the instance directories whose owner process is gone.
//
// # Cleanup
//
// After every outcome the supervisor: sends SIGTERM to the worker's
// process group and, through pidfds checked against the job, to every
// process of the job (the cgroup's processes; in the observed mode every
// member of the tree: the worker, its process group and session, and its
// descendants by the ppid chain, each known by pid and start time, the
// worker being their subreaper); waits up to the grace period; then kills
// everything — the v1 cgroup is frozen, killed and thawed, the v2 cgroup
// killed through cgroup.kill, the observed tree stopped member by member
// with SIGSTOP until none runs, then killed; waits until nothing of the job
// runs, within the operation's cleanup budget; reaps the worker (which is
// never reaped before, so that its pid, the group's id, cannot be reused
// while the group is signalled); reads the memory counters; removes the
// job cgroup. Anything unconfirmed is cleanup_failed, on which the
// executor quarantines the lane; Close then reports ErrUnconfirmed.
//
// # Spare workers
//
// With Config.Spares = n the supervisor keeps n spares: workers spawned
// and verified through step 2, each placed in a job cgroup of its own, so
// that an item does not wait for a process and a Go runtime to start, nor
// for the cgroup move. A spare is handed exactly one item, then cleaned
// up like any worker; its replacement is started in the background after
// that item's cleanup (one spare at a time, never on an item's path). An
// item that finds no spare ready starts a fresh worker as above.
//
// An idle spare is watched through its pidfd: one that exits (killed
// from outside) is taken out, cleaned up and replaced. When an item takes
// a spare, the supervisor checks it again — not exited, not exiting,
// stopped or a zombie in /proc/<pid>/stat, and no signal pending in
// /proc/<pid>/status, where a kill(2) that has returned stays until the
// process handles it — and takes the next one, or a fresh worker, when it
// fails. A kill can still land after that look — or be handled already,
// the signal no longer pending, by a Go worker's runtime on its way to
// exit — so a spare that ends before its Taken byte (the ACK write fails
// with EPIPE, or the pipe closes without the byte) never began the job,
// which is then given to a fresh worker. A kill that lands after the Taken
// byte is a worker killed during its item, as it would be for a fresh one:
// worker_crashed.
//
// Spares count in [Supervisor.Stats]: how many are ready and starting,
// started, replaced, used, lost and failed, the items that started a
// fresh worker, and the spares' resident memory. The memory their Go
// runtime allocated before their ready frame is charged to the server's
// cgroup, as a fresh worker's is; what they allocate after it, to their
// job cgroup. Close stops the replacements and reaps every spare, ready or
// starting, and confirms it gone.
//
// Ownership is not a sandbox: the supervisor manages the lifetime of
// packaged, trusted plugin work and caps its memory. It does not isolate
// the filesystem, the network or memory contents, and detaching work is
// not a supported way out of job ownership.
package supervisor
