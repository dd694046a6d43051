;; Imports alloc with a 32-bit signature: refused at load.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "compute") (result i32) (drop (call $alloc (i32.const 1))) (i32.const 0)))
