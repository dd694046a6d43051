;; A br_table of 201 labels (its default included), all to one block. The
;; compiler's time grows with the square of the branches to one block: at
;; 1,000,000 labels wazero compiled for more than 11 minutes (issue 11). This
;; one is modest; tests refuse it under a lowered limit and generate the
;; large ones.
(module
  (memory (export "memory") 1)
  (func (export "compute") (result i32)
    (block $b
      (br_table 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 $b (i32.const 0)))
    (i32.const 0)))
