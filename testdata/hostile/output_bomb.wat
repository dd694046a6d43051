(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (func (export "compute") (result i32)
    (call $output_set (call $alloc (i64.const 2097152)) (i64.const 2097152))
    (i32.const 0)))
