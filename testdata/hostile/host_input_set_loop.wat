;; compute allocates one 4 MiB block and loops on Extism input_set over it:
;; each call copies 4 MiB in the host. The copy counts toward the memory
;; limit, its work toward fuel, and the loop ends at the hard deadline.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "input_set" (func $input_set (param i64 i64)))
  (memory (export "memory") 1)
  (func (export "compute") (result i32)
    (local $block i64)
    (local.set $block (call $alloc (i64.const 4194304)))
    (if (i64.eqz (local.get $block)) (then unreachable))
    (loop $forever
      (call $input_set (local.get $block) (i64.const 4194304))
      (br $forever))
    (i32.const 0)))
