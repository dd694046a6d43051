(module
  (memory (export "memory") 1)
  (func (export "compute") (result i32)
    (loop $forever (br $forever))
    (i32.const 0)))
