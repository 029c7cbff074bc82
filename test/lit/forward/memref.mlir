// RUN: ad-opt -p ad-forward %s | filecheck %s
// Forward rules of memref: a tangent argument is checked against its
// primal; the tangent of a view is the same view of the tangent; a load
// loads the tangent at the same indices; a store of a value without a
// tangent stores zero into the tangent (the old tangent is overwritten);
// a local allocation of active memory gets a zero-filled tangent of its
// sizes, copied and freed like it. Memory of const arguments gets nothing.

func.func @views(%x: memref<?xf64>, %y: memref<4xf64>, %k: index, %c: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %sv = memref.subview %x[%k] [2] [1] : memref<?xf64> to memref<2xf64, strided<[1], offset: ?>>
  %a = memref.load %sv[%c1] : memref<2xf64, strided<[1], offset: ?>>
  %t = memref.alloc() : memref<2xf64>
  "memref.copy"(%sv, %t) : (memref<2xf64, strided<[1], offset: ?>>, memref<2xf64>) -> ()
  %b = memref.load %t[%c0] : memref<2xf64>
  %cc = memref.load %c[%c0] : memref<?xf64>
  %p = arith.mulf %a, %b : f64
  %q = arith.mulf %p, %cc : f64
  memref.store %q, %y[%c2] : memref<4xf64>
  %one = arith.constant 1.0 : f64
  memref.store %one, %y[%c0] : memref<4xf64>
  memref.dealloc %t : memref<2xf64>
  func.return %q : f64
}

// CHECK-LABEL: func.func @views_fwd_ddcc_d(%x: memref<?xf64>, %dx: memref<?xf64>, %y: memref<4xf64>, %dy: memref<4xf64>, %k: index, %c: memref<?xf64>) -> (f64, f64) {
// CHECK-NEXT:    ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
// CHECK-NEXT:    ad.shadow_check %y, %dy : memref<4xf64>, memref<4xf64>
// CHECK:         %sv = memref.subview %x[%k] [2] [1]
// CHECK-NEXT:    %dsv = memref.subview %dx[%k] [2] [1]
// CHECK-NEXT:    %a = memref.load %sv[%c1]
// CHECK-NEXT:    %da = memref.load %dsv[%c1]
// CHECK-NEXT:    %t = memref.alloc() : memref<2xf64>
// CHECK-NEXT:    %dt = memref.alloc() : memref<2xf64>
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    scf.for %[[I:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      memref.store %[[Z]], %dt[%[[I]]]
// CHECK-NEXT:    }
// CHECK-NEXT:    "memref.copy"(%sv, %t)
// CHECK-NEXT:    "memref.copy"(%dsv, %dt)
// CHECK-NEXT:    %b = memref.load %t[%c0]
// CHECK-NEXT:    %db = memref.load %dt[%c0]
// CHECK-NEXT:    %cc = memref.load %c[%c0]
// CHECK-NEXT:    %p = arith.mulf %a, %b : f64
// CHECK-NEXT:    %[[T1:.*]] = arith.mulf %da, %b : f64
// CHECK-NEXT:    %[[T2:.*]] = arith.mulf %db, %a : f64
// CHECK-NEXT:    %dp = arith.addf %[[T1]], %[[T2]] : f64
// CHECK-NEXT:    %q = arith.mulf %p, %cc : f64
// CHECK-NEXT:    %dq = arith.mulf %dp, %cc : f64
// CHECK-NEXT:    memref.store %q, %y[%c2]
// CHECK-NEXT:    memref.store %dq, %dy[%c2]
// CHECK-NEXT:    %one = arith.constant 1.000000e+00 : f64
// CHECK-NEXT:    memref.store %one, %y[%c0]
// CHECK-NEXT:    memref.store %[[Z]], %dy[%c0]
// CHECK-NEXT:    memref.dealloc %t : memref<2xf64>
// CHECK-NEXT:    memref.dealloc %dt : memref<2xf64>
// CHECK-NEXT:    func.return %q, %dq : f64, f64

func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %y: memref<4xf64>, %dy: memref<4xf64>, %k: index, %c: memref<?xf64>) -> f64 {
  %r:2 = ad.fwddiff @views(%x, %dx, %y, %dy, %k, %c) {activity = [dup, dup, const, const], ret_activity = [dup]} : (memref<?xf64>, memref<?xf64>, memref<4xf64>, memref<4xf64>, index, memref<?xf64>) -> (f64, f64)
  func.return %r#1 : f64
}
// CHECK-LABEL: func.func @main
// CHECK: func.call @views_fwd_ddcc_d(%x, %dx, %y, %dy, %k, %c)
