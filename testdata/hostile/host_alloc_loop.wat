;; compute loops on Extism alloc(4 MiB) + reset: each host call zeroes
;; 4 MiB in the host, for 5 units of the guest's own fuel. The host must
;; charge the work and stop the loop at the hard deadline.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "reset" (func $reset))
  (memory (export "memory") 1)
  (func (export "compute") (result i32)
    (loop $forever
      (drop (call $alloc (i64.const 4194304)))
      (call $reset)
      (br $forever))
    (i32.const 0)))
