// RUN: ad-opt %s --print-activity 2>&1 >/dev/null | filecheck %s
// RUN: ad-opt %s --reverse --cache-policy=tape-all | filecheck %s --check-prefix=GRAD
// Activity analysis beside an inactive integer computation: the histogram
// update (integer loads, adds and stores into %h) and the loads from the
// const array %c are const; x[i] * c[i] carries the derivative; %y is a dup
// argument whose loaded value %u influences nothing, so no adjoint code
// touches its shadow %dy.

// CHECK:      activity of @f (args: dup, const, dup, const; results: active)
// CHECK-NEXT:   arg %x : memref<?xf64>  active memory
// CHECK-NEXT:   arg %c : memref<?xf64>  const memory
// CHECK-NEXT:   arg %y : memref<?xf64>  active memory
// CHECK-NEXT:   arg %h : memref<?xi64>  const memory
// CHECK:        %r = scf.for  active
// CHECK-NEXT:     arg %i : index  const
// CHECK-NEXT:     arg %acc : f64  active
// CHECK-NEXT:     %a = memref.load  active  {{.*}}.mlir:{{[0-9]+}}:5
// CHECK-NEXT:     %k = memref.load  const
// CHECK-NEXT:     %u = memref.load  const
// CHECK-NEXT:     %p = arith.mulf  active
// CHECK-NEXT:     %s = arith.addf  active
// CHECK-NEXT:     %two = arith.constant  const
// CHECK-NEXT:     %j = arith.remsi  const
// CHECK-NEXT:     %old = memref.load  const
// CHECK-NEXT:     %one = arith.constant  const
// CHECK-NEXT:     %new = arith.addi  const
// CHECK-NEXT:     memref.store  const

// The reverse loop touches only %dx: no histogram, no %dy.
// GRAD-LABEL: func.func @f_grad_dcdc_a
// GRAD:         scf.for {{.*}} iter_args(%{{.*}} = %seed)
// GRAD-NOT:       %dy
// GRAD-NOT:       arith.remsi
// GRAD:           memref.store %{{.*}}, %dx[%{{.*}}] {ad.twin_of = {{[0-9]+}} : i64, ad.unchecked} : memref<?xf64>
// GRAD-NOT:     %dy
// GRAD:         func.return

func.func @f(%x: memref<?xf64>, %c: memref<?xf64>, %y: memref<?xf64>, %h: memref<?xi64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %k = memref.load %c[%i] : memref<?xf64>
    %u = memref.load %y[%i] : memref<?xf64>
    %p = arith.mulf %a, %k : f64
    %s = arith.addf %acc, %p : f64
    %two = arith.constant 2 : index
    %j = arith.remsi %i, %two : index
    %old = memref.load %h[%j] : memref<?xi64>
    %one = arith.constant 1 : i64
    %new = arith.addi %old, %one : i64
    memref.store %new, %h[%j] : memref<?xi64>
    scf.yield %s : f64
  }
  func.return %r : f64
}
func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %c: memref<?xf64>, %y: memref<?xf64>, %dy: memref<?xf64>, %h: memref<?xi64>) -> () {
  %s = arith.constant 1.0 : f64
  ad.autodiff @f(%x, %dx, %c, %y, %dy, %h, %s) {activity = [dup, const, dup, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xi64>, f64) -> ()
  func.return
}
