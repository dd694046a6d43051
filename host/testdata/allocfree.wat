;; Allocates and frees a 1 MiB block 2,000 times (2,000 MiB in all): the
;; host reuses freed blocks, so this runs within a 64 MiB memory limit.
;; Each block is written at its last byte, and is 0 long once freed.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "free" (func $free (param i64)))
  (import "extism:host/env" "length" (func $length (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (func (export "compute") (result i32)
    (local $i i32) (local $b i64) (local $out i64)
    (block $done (loop $again
      (br_if $done (i32.ge_u (local.get $i) (i32.const 2000)))
      (local.set $b (call $alloc (i64.const 1048576)))
      (if (i64.eqz (local.get $b)) (then (return (i32.const 1))))
      (call $store_u8 (i64.add (local.get $b) (i64.const 1048575)) (i32.const 7))
      (call $free (local.get $b))
      (if (i64.ne (call $length (local.get $b)) (i64.const 0)) (then (return (i32.const 2))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $again)))
    (local.set $out (call $alloc (i64.const 2)))
    (call $store_u8 (local.get $out) (i32.const 111)) ;; "o"
    (call $store_u8 (i64.add (local.get $out) (i64.const 1)) (i32.const 107)) ;; "k"
    (call $output_set (local.get $out) (i64.const 2))
    (i32.const 0)))
