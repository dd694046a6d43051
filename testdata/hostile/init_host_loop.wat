;; _initialize loops forever on Extism log_info with a 4 MiB block: as
;; image_loop.wat, but its time goes to host calls.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "log_info" (func $log_info (param i64)))
  (memory (export "memory") 1)
  (func (export "_initialize")
    (local $block i64)
    (local.set $block (call $alloc (i64.const 4194304)))
    (loop $forever
      (call $log_info (local.get $block))
      (br $forever)))
  (func (export "describe") (result i32) (i32.const 0))
  (func (export "compute") (result i32) (i32.const 0)))
