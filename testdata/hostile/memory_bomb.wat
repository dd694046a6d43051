(module
  (memory (export "memory") 1)
  (func (export "compute") (result i32)
    (loop $grow
      ;; 256 pages = 16 MiB a step, until refused
      (br_if $grow (i32.ne (memory.grow (i32.const 256)) (i32.const -1))))
    unreachable))
