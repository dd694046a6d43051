;; A plain Extism plugin for the sidecar tests: it knows nothing of
;; Toolhost (no describe, no compute). Each export is one behaviour.
;;   echo     outputs its input unchanged
;;   greet    outputs config_get("greeting"), nothing when absent
;;   fail     sets the plain-text error "the plugin says no" and returns 1
;;   badutf8  outputs the bytes ff fe, which are not UTF-8
;;   spin     loops forever
;;   grow     grows its memory by 256 pages (16 MiB), trapping if refused
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "length" (func $length (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "error_set" (func $error_set (param i64)))
  (import "extism:host/env" "config_get" (func $config_get (param i64) (result i64)))
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "greeting")
  (data (i32.const 16) "the plugin says no")
  (data (i32.const 64) "\ff\fe")

  ;; $block copies n bytes of linear memory at p into a new block.
  (func $block (param $p i32) (param $n i32) (result i64)
    (local $blk i64) (local $i i32)
    (local.set $blk (call $alloc (i64.extend_i32_u (local.get $n))))
    (block $done (loop $copy
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (call $store_u8 (i64.add (local.get $blk) (i64.extend_i32_u (local.get $i)))
        (i32.load8_u (i32.add (local.get $p) (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $copy)))
    (local.get $blk))

  (func (export "echo") (result i32)
    (local $n i64) (local $i i64) (local $blk i64)
    (local.set $n (call $input_length))
    (local.set $blk (call $alloc (local.get $n)))
    (block $done (loop $copy
      (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
      (call $store_u8 (i64.add (local.get $blk) (local.get $i)) (call $input_load_u8 (local.get $i)))
      (local.set $i (i64.add (local.get $i) (i64.const 1)))
      (br $copy)))
    (call $output_set (local.get $blk) (local.get $n))
    (i32.const 0))

  (func (export "greet") (result i32)
    (local $v i64)
    (local.set $v (call $config_get (call $block (i32.const 0) (i32.const 8))))
    (if (i64.ne (local.get $v) (i64.const 0))
      (then (call $output_set (local.get $v) (call $length (local.get $v)))))
    (i32.const 0))

  (func (export "fail") (result i32)
    (call $error_set (call $block (i32.const 16) (i32.const 18)))
    (i32.const 1))

  (func (export "badutf8") (result i32)
    (call $output_set (call $block (i32.const 64) (i32.const 2)) (i64.const 2))
    (i32.const 0))

  (func (export "spin") (result i32)
    (loop $forever (br $forever))
    (i32.const 0))

  (func (export "grow") (result i32)
    (if (i32.eq (memory.grow (i32.const 256)) (i32.const -1)) (then unreachable))
    (i32.const 0)))
