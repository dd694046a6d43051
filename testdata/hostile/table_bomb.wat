(module
  (memory (export "memory") 1)
  (table $t 1 funcref)
  (func (export "compute") (result i32)
    (loop $grow
      (drop (table.grow $t (ref.null func) (i32.const 1000000)))
      (br $grow))
    (i32.const 0)))
