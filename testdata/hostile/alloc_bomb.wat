(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (func (export "compute") (result i32)
    (loop $more
      ;; 64 MiB blocks until the host returns 0
      (br_if $more (i64.ne (call $alloc (i64.const 67108864)) (i64.const 0))))
    unreachable))
