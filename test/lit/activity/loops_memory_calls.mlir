// RUN: ad-opt %s --print-activity 2>&1 >/dev/null | filecheck %s
// Activity through loops, local memory and calls:
// - %acc starts as the constant 0.0 but is updated with active values: active;
// - %buf receives active values and is read back: active memory (it needs a
//   shadow); %tab only ever holds the constant 2.0: const memory, and loads
//   from it are const;
// - calls are analysed per call site (after inlining): scale(a, t) is
//   active, scale(k, 2.0) with the const argument %k is const.

// CHECK-LABEL: activity of @g (args: dup, active, const; results: active)
// CHECK:         arg %w : f64  active
// CHECK-NEXT:    arg %k : f64  const
// CHECK:         %buf = memref.alloc  active memory
// CHECK-NEXT:    %tab = memref.alloc  const memory
// CHECK:         scf.for  const
// CHECK:         %r = scf.for  active
// CHECK-NEXT:      arg %i : index  const
// CHECK-NEXT:      arg %acc : f64  active
// CHECK-NEXT:      %a = memref.load  active
// CHECK-NEXT:      %m = arith.remsi  const
// CHECK-NEXT:      %t = memref.load  const
// CHECK-NEXT:      %r = arith.mulf  active
// CHECK-NEXT:      memref.store  active
// CHECK-NEXT:      %e = memref.load  active
// CHECK-NEXT:      %r = arith.mulf  const
// CHECK-NEXT:      %s = arith.addf  active
// CHECK-NEXT:      %s2 = arith.mulf  active

func.func @scale(%v: f64, %k: f64) -> f64 {
  %r = arith.mulf %v, %k : f64
  func.return %r : f64
}
func.func @g(%x: memref<?xf64>, %w: f64, %k: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f64
  %two = arith.constant 2.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %buf = memref.alloc() : memref<4xf64>
  %tab = memref.alloc() : memref<4xf64>
  scf.for %j = %c0 to %c4 step %c1 {
    memref.store %two, %tab[%j] : memref<4xf64>
  }
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %m = arith.remsi %i, %c4 : index
    %t = memref.load %tab[%m] : memref<4xf64>
    %b = func.call @scale(%a, %t) : (f64, f64) -> f64
    memref.store %b, %buf[%m] : memref<4xf64>
    %e = memref.load %buf[%m] : memref<4xf64>
    %kk = func.call @scale(%k, %two) : (f64, f64) -> f64
    %s = arith.addf %acc, %e : f64
    %s2 = arith.mulf %s, %w : f64
    scf.yield %s2 : f64
  }
  func.return %r : f64
}
func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %w: f64, %k: f64) -> f64 {
  %s = arith.constant 1.0 : f64
  %dw = ad.autodiff @g(%x, %dx, %w, %k, %s) {activity = [dup, active, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64, f64, f64) -> f64
  func.return %dw : f64
}
