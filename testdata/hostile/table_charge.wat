;; 10 tables of 100,000 funcrefs each, within the structure limits: 1,000,000
;; elements, 8,000,000 bytes per instance, charged to each call's memory
;; limit with the memory's minimum.
(module
  (memory (export "memory") 1)
  (table 100000 funcref)
  (table 100000 funcref)
  (table 100000 funcref)
  (table 100000 funcref)
  (table 100000 funcref)
  (table 100000 funcref)
  (table 100000 funcref)
  (table 100000 funcref)
  (table 100000 funcref)
  (table 100000 funcref)
  (func (export "compute") (result i32) (i32.const 0)))
