// RUN: ad-opt %s -p ad-fuse-loops | filecheck %s
// ad-fuse-loops alone: adjacent scf.for ops over the same range become one
// loop (first body, then second; iter_args of both) when nothing of the
// second uses the first's results and the alias analysis proves that no
// iteration of one touches memory a later iteration of the other writes.

// The in-place square then its sum (benchmark kernel 5): one loop; the
// constant between them moves before it.
// CHECK-LABEL: func.func @square_then_sum
// CHECK:         %s = arith.constant 0.000000e+00 : f64
// CHECK:         %{{.*}} = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %s) -> (f64) {
// CHECK-NEXT:      %a = memref.load %x[%i]
// CHECK-NEXT:      %sq = arith.mulf %a, %a
// CHECK-NEXT:      memref.store %sq, %x[%i]
// CHECK-NEXT:      %b = memref.load %x[%i]
// CHECK-NEXT:      %acc2 = arith.addf %acc, %b
// CHECK-NEXT:      scf.yield %acc2 : f64
// CHECK-NEXT:    } {ad.fused = "{{.*}}fuse_loops.mlir:{{[0-9]+}}:3"}
// CHECK-NOT:     scf.for
// CHECK:         func.return
func.func @square_then_sum(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    %sq = arith.mulf %a, %a : f64
    memref.store %sq, %x[%i] : memref<?xf64>
  }
  %s = arith.constant 0.0 : f64
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %s) -> (f64) {
    %b = memref.load %x[%j] : memref<?xf64>
    %acc2 = arith.addf %acc, %b : f64
    scf.yield %acc2 : f64
  }
  func.return %r : f64
}

// The second loop reads x[i+1], which the first writes one iteration
// later: fused, it would read the old value. Two loops stay.
// CHECK-LABEL: func.func @reads_ahead
// CHECK:         scf.for
// CHECK:         scf.for
// CHECK-NOT:     ad.fused
// CHECK:         func.return
func.func @reads_ahead(%x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    %d = arith.addf %a, %a : f64
    memref.store %d, %x[%i] : memref<?xf64>
  }
  scf.for %j = %c0 to %n step %c1 {
    %k = arith.addi %j, %c1 : index
    %b = memref.load %x[%k] : memref<?xf64>
    memref.store %b, %y[%j] : memref<?xf64>
  }
  func.return
}

// The second loop writes x[j], which the first reads one iteration later
// (x[i-1] at i = j+1): fused, that read would see the new value. Two
// loops stay.
// CHECK-LABEL: func.func @writes_behind
// CHECK:         scf.for
// CHECK:         scf.for
// CHECK-NOT:     ad.fused
// CHECK:         func.return
func.func @writes_behind(%x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  scf.for %i = %c1 to %n step %c1 {
    %k = arith.subi %i, %c1 : index
    %a = memref.load %x[%k] : memref<?xf64>
    memref.store %a, %y[%i] : memref<?xf64>
  }
  scf.for %j = %c1 to %n step %c1 {
    %b = memref.load %y[%j] : memref<?xf64>
    memref.store %b, %x[%j] : memref<?xf64>
  }
  func.return
}

// The second loop starts from the first's result: not fused.
// CHECK-LABEL: func.func @uses_result
// CHECK:         %[[R:.*]] = scf.for
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %[[R]])
func.func @uses_result(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %a2 = arith.addf %a, %v : f64
    scf.yield %a2 : f64
  }
  %q = scf.for %j = %c0 to %n step %c1 iter_args(%b = %r) -> (f64) {
    %v = memref.load %x[%j] : memref<?xf64>
    %b2 = arith.mulf %b, %v : f64
    scf.yield %b2 : f64
  }
  func.return %q : f64
}

// Different ranges (the same upper bound computed twice counts as one):
// the first pair is fused, the third loop (from 1) is not. Without
// ad.noalias, %x and %y could be one array and nothing would fuse
// (@may_alias).
// CHECK-LABEL: func.func @ranges
// CHECK:         scf.for %i = %c0 to %n step %c1 {
// CHECK:         } {ad.fused =
// CHECK:         scf.for %k = %c1 to %n step %c1 {
// CHECK-NOT:     scf.for
// CHECK:         func.return
func.func @ranges(%x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    memref.store %a, %y[%i] : memref<?xf64>
  }
  %n2 = memref.dim %x, %c0 : memref<?xf64>
  scf.for %j = %c0 to %n2 step %c1 {
    %b = memref.load %y[%j] : memref<?xf64>
    %b2 = arith.mulf %b, %b : f64
    memref.store %b2, %y[%j] : memref<?xf64>
  }
  scf.for %k = %c1 to %n step %c1 {
    %c = memref.load %y[%k] : memref<?xf64>
    memref.store %c, %x[%k] : memref<?xf64>
  }
  func.return
}

// CHECK-LABEL: func.func @may_alias
// CHECK:         scf.for
// CHECK:         scf.for
// CHECK-NOT:     ad.fused
// CHECK:         func.return
func.func @may_alias(%x: memref<?xf64>, %y: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    memref.store %a, %y[%i] : memref<?xf64>
  }
  scf.for %j = %c0 to %n step %c1 {
    %b = memref.load %y[%j] : memref<?xf64>
    memref.store %b, %x[%j] : memref<?xf64>
  }
  func.return
}

// The second loop reads z[j], which the first does not check: fused, a
// too short z would stop the call at the second loop's line before the
// first loop had run to its end (and failed there, maybe, with another
// message). Two loops stay.
// CHECK-LABEL: func.func @unchecked_by_the_first
// CHECK:         scf.for
// CHECK:         scf.for
// CHECK-NOT:     ad.fused
// CHECK:         func.return
func.func @unchecked_by_the_first(%x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias},
                                  %z: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    memref.store %a, %y[%i] : memref<?xf64>
  }
  scf.for %j = %c0 to %n step %c1 {
    %b = memref.load %z[%j] : memref<?xf64>
    memref.store %b, %y[%j] : memref<?xf64>
  }
  func.return
}
