;; The Extism kernel functions beyond input and output: config_get,
;; var_get/var_set, error_set with plain text and with a tool error
;; document, get_log_level and the log functions. Each export puts what it
;; found in its output.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "length" (func $length (param i64) (result i64)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "error_set" (func $error_set (param i64)))
  (import "extism:host/env" "error_get" (func $error_get (result i64)))
  (import "extism:host/env" "config_get" (func $config_get (param i64) (result i64)))
  (import "extism:host/env" "var_get" (func $var_get (param i64) (result i64)))
  (import "extism:host/env" "var_set" (func $var_set (param i64 i64)))
  (import "extism:host/env" "get_log_level" (func $get_log_level (result i32)))
  (import "extism:host/env" "log_trace" (func $log_trace (param i64)))
  (import "extism:host/env" "log_debug" (func $log_debug (param i64)))
  (import "extism:host/env" "log_info" (func $log_info (param i64)))
  (import "extism:host/env" "log_warn" (func $log_warn (param i64)))
  (import "extism:host/env" "log_error" (func $log_error (param i64)))
  (memory (export "memory") 1)
  (data (i32.const 0) "greeting")        ;; 0, 8
  (data (i32.const 16) "absent")         ;; 16, 6
  (data (i32.const 32) "n")              ;; 32, 1
  (data (i32.const 48) "abc")            ;; 48, 3
  (data (i32.const 64) "leaked")         ;; 64, 6
  (data (i32.const 80) "something broke: \c3\a9t\c3\a9")  ;; 80, 22
  (data (i32.const 112) "{\"code\":\"invalid_parameters\",\"message\":\"bad input\",\"retryable\":false}") ;; 112, 69
  (data (i32.const 192) "{\"code\":\"memory_limit\",\"message\":\"lies\"}") ;; 192, 40
  (data (i32.const 240) "msg")           ;; 240, 3

  ;; block copies len bytes of linear memory at ptr into a new block.
  (func $block (param $ptr i32) (param $len i32) (result i64)
    (local $b i64) (local $i i32)
    (local.set $b (call $alloc (i64.extend_i32_u (local.get $len))))
    (block $done (loop $copy
      (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
      (call $store_u8 (i64.add (local.get $b) (i64.extend_i32_u (local.get $i)))
        (i32.load8_u (i32.add (local.get $ptr) (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $copy)))
    (local.get $b))

  (func $out (param $b i64) (call $output_set (local.get $b) (call $length (local.get $b))))

  ;; config: the value of "greeting", or "absent".
  (func (export "config") (result i32)
    (local $v i64)
    (local.set $v (call $config_get (call $block (i32.const 0) (i32.const 8))))
    (if (i64.eqz (local.get $v)) (then (local.set $v (call $block (i32.const 16) (i32.const 6)))))
    (call $out (local.get $v))
    (i32.const 0))

  ;; vars: "n" is unset at first (else it fails, "leaked"); set to "abc",
  ;; read back, deleted and gone again; the output is what was read back.
  (func (export "vars") (result i32)
    (local $v i64)
    (if (i64.ne (call $var_get (call $block (i32.const 32) (i32.const 1))) (i64.const 0))
      (then (call $error_set (call $block (i32.const 64) (i32.const 6))) (return (i32.const 1))))
    (call $var_set (call $block (i32.const 32) (i32.const 1)) (call $block (i32.const 48) (i32.const 3)))
    (local.set $v (call $var_get (call $block (i32.const 32) (i32.const 1))))
    (if (i64.eqz (local.get $v)) (then (unreachable)))
    (call $out (local.get $v))
    (call $var_set (call $block (i32.const 32) (i32.const 1)) (i64.const 0))
    (if (i64.ne (call $var_get (call $block (i32.const 32) (i32.const 1))) (i64.const 0)) (then (unreachable)))
    (i32.const 0))

  ;; keep_var sets "n" and returns: the next call must not see it.
  (func (export "keep_var") (result i32)
    (if (i64.ne (call $var_get (call $block (i32.const 32) (i32.const 1))) (i64.const 0))
      (then (call $error_set (call $block (i32.const 64) (i32.const 6))) (return (i32.const 1))))
    (call $var_set (call $block (i32.const 32) (i32.const 1)) (call $block (i32.const 48) (i32.const 3)))
    (i32.const 0))

  ;; var_flood sets a 1 MiB variable: the store's bound refuses it.
  (func (export "var_flood") (result i32)
    (call $var_set (call $block (i32.const 32) (i32.const 1)) (call $alloc (i64.const 1048576)))
    (i32.const 0))

  ;; var_half sets a 512 KiB variable: within the store's bound, it counts
  ;; toward the memory limit.
  (func (export "var_half") (result i32)
    (call $var_set (call $block (i32.const 32) (i32.const 1)) (call $alloc (i64.const 524288)))
    (i32.const 0))

  ;; The three kinds of error: plain text, a tool error document, and a
  ;; document with a code a tool may not raise. error_get must answer the
  ;; block set.
  (func $fail (param $ptr i32) (param $len i32) (result i32)
    (local $b i64)
    (local.set $b (call $block (local.get $ptr) (local.get $len)))
    (call $error_set (local.get $b))
    (if (i64.ne (call $error_get) (local.get $b)) (then (unreachable)))
    (i32.const 1))
  (func (export "fail_text") (result i32) (call $fail (i32.const 80) (i32.const 22)))
  (func (export "fail_json") (result i32) (call $fail (i32.const 112) (i32.const 69)))
  (func (export "fail_code") (result i32) (call $fail (i32.const 192) (i32.const 40)))

  ;; logs logs "msg" at each level; its output is get_log_level's answer
  ;; as one digit.
  (func (export "logs") (result i32)
    (local $b i64)
    (call $log_trace (call $block (i32.const 240) (i32.const 3)))
    (call $log_debug (call $block (i32.const 240) (i32.const 3)))
    (call $log_info (call $block (i32.const 240) (i32.const 3)))
    (call $log_warn (call $block (i32.const 240) (i32.const 3)))
    (call $log_error (call $block (i32.const 240) (i32.const 3)))
    (local.set $b (call $alloc (i64.const 1)))
    (call $store_u8 (local.get $b) (i32.add (i32.const 48) (call $get_log_level)))
    (call $output_set (local.get $b) (i64.const 1))
    (i32.const 0)))
