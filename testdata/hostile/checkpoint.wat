;; Loops, asking the host at every iteration; when told to stop it raises
;; the tool error {"code":"execution_limit","retryable":true}.
(module
  (import "toolhost:host/env" "checkpoint" (func $checkpoint (result i32)))
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "error_set" (func $error_set (param i64)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"code\":\"execution_limit\",\"message\":\"stopped at a checkpoint\",\"retryable\":true}")
  (func $emit (param $ptr i32) (param $len i32)
    (local $blk i64) (local $i i32)
    (local.set $blk (call $alloc (i64.extend_i32_u (local.get $len))))
    (block $done (loop $copy
      (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
      (call $store_u8 (i64.add (local.get $blk) (i64.extend_i32_u (local.get $i)))
        (i32.load8_u (i32.add (local.get $ptr) (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $copy)))
    (call $output_set (local.get $blk) (i64.extend_i32_u (local.get $len))))
  (func (export "compute") (result i32)
    (local $blk i64) (local $i i32)
    (loop $work (br_if $work (i32.eqz (call $checkpoint))))
    ;; copy the error document into a block and set it
    (local.set $blk (call $alloc (i64.const 79)))
    (block $done (loop $copy
      (br_if $done (i32.ge_u (local.get $i) (i32.const 79)))
      (call $store_u8 (i64.add (local.get $blk) (i64.extend_i32_u (local.get $i)))
        (i32.load8_u (local.get $i)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $copy)))
    (call $error_set (local.get $blk))
    (i32.const 1)))
