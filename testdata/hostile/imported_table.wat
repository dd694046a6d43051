;; Imports a table: the host provides none. Refused at load, naming it.
(module
  (import "env" "table" (table 1 funcref))
  (memory (export "memory") 1)
  (func (export "compute") (result i32) (i32.const 0)))
