// Upstream MLIR's printing of func/arith/math/memref/scf ops that xDSL 0.74
// does not parse or lower by itself: memref.global's custom form, math.sincos
// (two results), arith.trunci/extui (generic form: overflowFlags),
// math.ipowi, arith.index_castui, func.constant + func.call_indirect (a
// direct call once the callee is known), differentiated and run.
// RUN: ad-run %s | filecheck %s
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=REV
// f = 1 + 2 + 3 + sin(0.5)^2 + cos(0.5); df/dx = dx0 + w, df/da = 2 sin cos - sin
// CHECK: f = 7.10743
// CHECK-NEXT: dx = 1.5 2.5 3.5 da = 0.362045
// REV-LABEL: func.func @f_grad_
// REV-NOT: math.sincos
// REV-NOT: call_indirect
// REV: math.cos
memref.global "private" constant @w : memref<3xf64> = dense<[1.0, 2.0, 3.0]>
func.func @h(%a: f64) -> f64 {
  %r = arith.mulf %a, %a : f64
  return %r : f64
}
func.func @f(%x: memref<?xf64>, %a: f64, %k: i64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f64
  %g = memref.get_global @w : memref<3xf64>
  %s, %c = math.sincos %a : f64
  %t = arith.trunci %k : i64 to i32
  %e = arith.extui %t : i32 to i64
  %p = math.ipowi %e, %e : i64
  %pi = arith.index_castui %p : i64 to index
  %pf = arith.uitofp %p : i64 to f64
  %fp = func.constant @h : (f64) -> f64
  %hs = func.call_indirect %fp(%s) : (f64) -> f64
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %z) -> f64 {
    %v = memref.load %x[%i] : memref<?xf64>
    %wv = memref.load %g[%i] : memref<3xf64>
    %m = arith.mulf %v, %wv : f64
    %q = arith.addf %acc, %m : f64
    scf.yield %q : f64
  }
  %r2 = arith.addf %r, %hs : f64
  %r3 = arith.addf %r2, %c : f64
  %r4 = arith.mulf %r3, %pf : f64
  return %r4 : f64
}
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f64
  %half = arith.constant 0.5 : f64
  %k = arith.constant 1 : i64
  %x = memref.alloc(%c3) : memref<?xf64>
  %dx = memref.alloc(%c3) : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    memref.store %one, %x[%i] : memref<?xf64>
    memref.store %half, %dx[%i] : memref<?xf64>
  }
  %v = func.call @f(%x, %half, %k) : (memref<?xf64>, f64, i64) -> f64
  "printf.print_format"(%v) {format_str = "f = {}\0A"} : (f64) -> ()
  %da = "ad.autodiff"(%x, %dx, %half, %k, %one) <{callee = @f, activity = ["dup", "active", "const"], ret_activity = ["active"]}> : (memref<?xf64>, memref<?xf64>, f64, i64, f64) -> f64
  %d0 = memref.load %dx[%c0] : memref<?xf64>
  %d1 = memref.load %dx[%c1] : memref<?xf64>
  %d2 = memref.load %dx[%c2] : memref<?xf64>
  "printf.print_format"(%d0, %d1, %d2, %da) {format_str = "dx = {} {} {} da = {}\0A"} : (f64, f64, f64, f64) -> ()
  return
}
