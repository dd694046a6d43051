;; Imports a global: the host provides none. Refused at load, naming it.
(module
  (import "env" "counter" (global $g i32))
  (memory (export "memory") 1)
  (func (export "compute") (result i32) (global.get $g)))
