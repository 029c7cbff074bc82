// Upstream MLIR's printing of structured ops xDSL 0.74 has no custom format
// for: scf.parallel with a reduction, affine.parallel with a symbolic bound,
// affine.if with results, affine.max, memref.copy, memref.alloca_scope with a
// result, memref.cast, memref.expand_shape/collapse_shape; and math.ipowi
// with negative exponents. Lowered (affine and scf.parallel to scf.for)
// before differentiating and in ad-run.
// RUN: ad-run %s | filecheck %s
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=REV
// x = [1, 2, 3]: f = sum x^2 + 2 x0 x1 + 2 x1 x2 = 30, df/dx = [6, 12, 10]
// CHECK: f = 30
// CHECK-NEXT: dx = 6 12 10
// CHECK-NEXT: ipowi = 27 -8 -1 0 1
// REV-LABEL: func.func @f_grad_
// REV-NOT: affine.
// REV-NOT: scf.parallel
// REV: scf.for
#set = affine_set<(d0)[s0] : (d0 - 1 >= 0)>
func.func @f(%x: memref<?xf64>, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %two = arith.constant 2.0 : f64
  %r = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%z) -> f64 {
    %v = memref.load %x[%i] : memref<?xf64>
    %sq = arith.mulf %v, %v : f64
    scf.reduce(%sq : f64) {
    ^bb0(%l: f64, %rr: f64):
      %s = arith.addf %l, %rr : f64
      scf.reduce.return %s : f64
    }
  }
  %t = memref.alloc(%n) : memref<?xf64>
  affine.parallel (%i) = (0) to (symbol(%n)) {
    %v = affine.load %x[%i] : memref<?xf64>
    %m = arith.mulf %v, %two : f64
    affine.store %m, %t[%i] : memref<?xf64>
  }
  %u = memref.alloc(%n) : memref<?xf64>
  memref.copy %t, %u : memref<?xf64> to memref<?xf64>
  %q = affine.for %j = 0 to %n iter_args(%a = %r) -> f64 {
    %w = affine.if #set(%j)[%n] -> f64 {
      %lo = affine.max affine_map<(d0) -> (d0 - 1, 0)>(%j)
      %v = memref.load %u[%lo] : memref<?xf64>
      %xv = affine.load %x[%j] : memref<?xf64>
      %p = arith.mulf %v, %xv : f64
      affine.yield %p : f64
    } else {
      affine.yield %z : f64
    }
    %s = arith.addf %a, %w : f64
    affine.yield %s : f64
  }
  %res = memref.alloca_scope -> f64 {
    %st = memref.alloca() : memref<4xf64>
    %cs = memref.cast %st : memref<4xf64> to memref<?xf64>
    %e = memref.expand_shape %st [[0, 1]] output_shape [2, 2] : memref<4xf64> into memref<2x2xf64>
    memref.store %q, %e[%c1, %c0] : memref<2x2xf64>
    %col = memref.collapse_shape %e [[0, 1]] : memref<2x2xf64> into memref<4xf64>
    %c2 = arith.constant 2 : index
    %back = memref.load %col[%c2] : memref<4xf64>
    memref.alloca_scope.return %back : f64
  }
  memref.dealloc %t : memref<?xf64>
  memref.dealloc %u : memref<?xf64>
  return %res : f64
}
func.func @pw(%a: i64, %b: i64) -> i64 {
  %p = math.ipowi %a, %b : i64
  return %p : i64
}
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f64
  %zero = arith.constant 0.0 : f64
  %x = memref.alloc(%c3) : memref<?xf64>
  %dx = memref.alloc(%c3) : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    %f1 = arith.addf %f, %one : f64
    memref.store %f1, %x[%i] : memref<?xf64>
    memref.store %zero, %dx[%i] : memref<?xf64>
  }
  %v = func.call @f(%x, %c3) : (memref<?xf64>, index) -> f64
  "printf.print_format"(%v) {format_str = "f = {}\0A"} : (f64) -> ()
  "ad.autodiff"(%x, %dx, %c3, %one) <{callee = @f, activity = ["dup", "const"], ret_activity = ["active"]}> : (memref<?xf64>, memref<?xf64>, index, f64) -> ()
  %d0 = memref.load %dx[%c0] : memref<?xf64>
  %d1 = memref.load %dx[%c1] : memref<?xf64>
  %d2 = memref.load %dx[%c2] : memref<?xf64>
  "printf.print_format"(%d0, %d1, %d2) {format_str = "dx = {} {} {}\0A"} : (f64, f64, f64) -> ()
  %i3 = arith.constant 3 : i64
  %im1 = arith.constant -1 : i64
  %im3 = arith.constant -3 : i64
  %im2 = arith.constant -2 : i64
  %i0 = arith.constant 0 : i64
  %p1 = func.call @pw(%i3, %i3) : (i64, i64) -> i64
  %p2 = func.call @pw(%im2, %i3) : (i64, i64) -> i64
  %p3 = func.call @pw(%im1, %im3) : (i64, i64) -> i64
  %p4 = func.call @pw(%i3, %im1) : (i64, i64) -> i64
  %p5 = func.call @pw(%im2, %i0) : (i64, i64) -> i64
  "printf.print_format"(%p1, %p2, %p3, %p4, %p5) {format_str = "ipowi = {} {} {} {} {}\0A"} : (i64, i64, i64, i64, i64) -> ()
  return
}
