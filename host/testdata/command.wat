;; A WASI command module: _start (main) outputs its input and ends as the
;; input's first byte says: "0"–"9" proc_exit with that code, "r" returns,
;; "e" sets the input as its error and exits 3, "z" sets it and exits 0.
(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "error_set" (func $error_set (param i64)))
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (memory (export "memory") 1)
  (global $ran (mut i32) (i32.const 0))
  (func (export "_start")
    (local $n i64) (local $i i64) (local $blk i64) (local $c i32)
    ;; main runs once per instance: a second run would see $ran set.
    (if (global.get $ran) (then (unreachable)))
    (global.set $ran (i32.const 1))
    (local.set $n (call $input_length))
    (local.set $blk (call $alloc (local.get $n)))
    (block $done (loop $copy
      (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
      (call $store_u8 (i64.add (local.get $blk) (local.get $i)) (call $input_load_u8 (local.get $i)))
      (local.set $i (i64.add (local.get $i) (i64.const 1)))
      (br $copy)))
    (call $output_set (local.get $blk) (local.get $n))
    (local.set $c (call $input_load_u8 (i64.const 0)))
    (if (i32.eq (local.get $c) (i32.const 114)) (then (return))) ;; r
    (if (i32.eq (local.get $c) (i32.const 101)) ;; e
      (then (call $error_set (local.get $blk)) (call $exit (i32.const 3))))
    (if (i32.eq (local.get $c) (i32.const 122)) ;; z
      (then (call $error_set (local.get $blk)) (call $exit (i32.const 0))))
    (call $exit (i32.sub (local.get $c) (i32.const 48)))))
