;; compute allocates one 4 MiB block and loops on Extism log_info with it:
;; the host log is bounded, but each call still reaches the host with
;; 4 MiB. The work is charged, and the loop ends at the hard deadline.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "log_info" (func $log_info (param i64)))
  (memory (export "memory") 1)
  (func (export "compute") (result i32)
    (local $block i64)
    (local.set $block (call $alloc (i64.const 4194304)))
    (if (i64.eqz (local.get $block)) (then unreachable))
    (loop $forever
      (call $log_info (local.get $block))
      (br $forever))
    (i32.const 0)))
