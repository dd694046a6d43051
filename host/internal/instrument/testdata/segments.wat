;; segments.wat: control flow for the exact fuel tests of the segment cost
;; model (see TestFuelSegments, which derives each function's fuel).
(module
  (memory 1)
  (table 1 funcref)

  ;; pick: an if with an else after the entry segment.
  (func (export "pick") (param $x i32) (result i32)
    (if (result i32) (local.get $x)
      (then (i32.const 10))
      (else (i32.add (i32.const 20) (i32.const 1)))))

  ;; clamp: br_if splits; the if's condition runs after it and is charged
  ;; in the arms, an else being added.
  (func (export "clamp") (param $x i32) (result i32)
    (block $b
      (br_if $b (i32.eqz (local.get $x)))
      (if (i32.gt_u (local.get $x) (i32.const 100))
        (then (local.set $x (i32.const 100)))))
    (local.get $x))

  ;; join: the code after $b is reached by a br and by falling through.
  (func (export "join") (param $x i32) (result i32)
    (block $b
      (if (local.get $x)
        (then (local.set $x (i32.const 7)) (br $b))
        (else (local.set $x (i32.const 9))))
      (local.set $x (i32.mul (local.get $x) (i32.const 2))))
    (i32.add (local.get $x) (i32.const 1)))

  ;; dead: code after an unconditional br is not charged.
  (func (export "dead") (result i32)
    (block $b
      (br $b)
      (drop (i32.const 1))
      (nop)
      (loop $l (br $l)))
    (i32.const 5))

  ;; table: br_table, each target its own segment.
  (func (export "table") (param $x i32) (result i32)
    (block $c
      (block $b
        (block $a
          (br_table $a $b $c (local.get $x)))
        (return (i32.const 10)))
      (return (i32.const 20)))
    (i32.const 30))

  ;; count: a loop whose back edge is a br_if, charged at its header.
  (func (export "count") (param $n i32) (result i32)
    (local $i i32)
    (loop $l
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
    (local.get $i))

  ;; grow: a segment with memory.grow is charged and tested before it runs,
  ;; not in the if's arms.
  (func (export "grow") (param $x i32) (result i32)
    (block $b
      (br_if $b (local.get $x))
      (if (i32.eq (memory.grow (i32.const 0)) (i32.const -1))
        (then (unreachable))))
    (i32.const 1))

  ;; chain: an if in the then-arm of an if, both conditions light.
  (func (export "chain") (param $x i32) (result i32)
    (block $b
      (br_if $b (i32.eqz (local.get $x)))
      (if (i32.gt_u (local.get $x) (i32.const 10))
        (then
          (if (i32.gt_u (local.get $x) (i32.const 20))
            (then (local.set $x (i32.const 20)))
            (else (local.set $x (i32.const 15)))))))
    (local.get $x))

  ;; spin: a loop that always goes back to its header, charged there.
  (func (export "spin")
    (loop $l (nop) (br $l))))
