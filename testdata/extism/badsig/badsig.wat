;; badsig: a module that imports an Extism kernel function with the wrong
;; signature — input_length as (i32) -> i64, where the kernel's is
;; () -> i64. Extism's own host refuses to instantiate it; so must
;; Toolhost, at load (import_refused), rather than run it.
(module
  (import "extism:host/env" "input_length" (func $input_length (param i32) (result i64)))
  (func (export "run") (result i32)
    (drop (call $input_length (i32.const 0)))
    (i32.const 0)))
