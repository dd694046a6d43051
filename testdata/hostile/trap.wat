(module
  (memory (export "memory") 1)
  (func (export "compute") (result i32)
    unreachable))
