// RUN: ad-run %s | filecheck %s
// Numeric checks of forward mode through ad-run (ad-forward runs first
// because the module contains ad.fwddiff), against hand derivations.

// s = sum_i x[i]^2 * w   (w scalar): ds = sum_i 2 x[i] dx[i] w + x[i]^2 dw
func.func @sumsq(%x: memref<?xf64>, %w: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %p = arith.mulf %a, %a : f64
    %q = arith.mulf %p, %w : f64
    %s = arith.addf %acc, %q : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

// In place: x[i] = x[i] * x[i] + c * x[i-1] (for i >= 1, in order), then
// y = x[n-1]; with a branch on the sign and a while loop halving t.
func.func @inplace(%x: memref<?xf64>, %c: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c1 to %n step %c1 {
    %im1 = arith.subi %i, %c1 : index
    %a = memref.load %x[%i] : memref<?xf64>
    %b = memref.load %x[%im1] : memref<?xf64>
    %aa = arith.mulf %a, %a : f64
    %cb = arith.mulf %c, %b : f64
    %v = arith.addf %aa, %cb : f64
    memref.store %v, %x[%i] : memref<?xf64>
  }
  %last = arith.subi %n, %c1 : index
  %y = memref.load %x[%last] : memref<?xf64>
  %zero = arith.constant 0.0 : f64
  %pos = arith.cmpf ogt, %y, %zero : f64
  %t = scf.if %pos -> (f64) {
    %e = math.exp %y : f64
    scf.yield %e : f64
  } else {
    %m = arith.negf %y : f64
    scf.yield %m : f64
  }
  %one = arith.constant 1.0 : f64
  %half = arith.constant 0.5 : f64
  %h = scf.while (%u = %t) : (f64) -> f64 {
    %big = arith.cmpf ogt, %u, %one : f64
    scf.condition(%big) %u : f64
  } do {
  ^bb0(%u2: f64):
    %u3 = arith.mulf %u2, %half : f64
    scf.yield %u3 : f64
  }
  func.return %h : f64
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %w = arith.constant 3.0 : f64
  %dw = arith.constant 0.5 : f64
  %x = memref.alloc(%c3) : memref<?xf64>
  %dx = memref.alloc(%c3) : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    %f1 = arith.addf %f, %one : f64
    memref.store %f1, %x[%i] : memref<?xf64>
    memref.store %one, %dx[%i] : memref<?xf64>
  }
  // x = [1, 2, 3], dx = [1, 1, 1], w = 3, dw = 0.5:
  // s = 14 * 3 = 42, ds = 2*(1+2+3)*3 + 14*0.5 = 43
  %s, %ds = ad.fwddiff @sumsq(%x, %dx, %w, %dw) {activity = [dup, dup], ret_activity = [dup]} : (memref<?xf64>, memref<?xf64>, f64, f64) -> (f64, f64)
  // CHECK: sumsq 42 43
  printf.print_format "sumsq {} {}\n", %s : f64, %ds : f64
  // dupnoneed result: only the tangent; width 2 (lanes dx and dw-only)
  %dz = memref.alloc(%c3) : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    memref.store %zero, %dz[%i] : memref<?xf64>
  }
  %l0, %l1 = ad.fwddiff @sumsq(%x, %dx, %dz, %w, %zero, %dw) {activity = [dup, dup], ret_activity = [dupnoneed], width = 2} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, f64, f64, f64) -> (f64, f64)
  // lane 0: 2*(1+2+3)*3 = 36; lane 1: 14*0.5 = 7
  // CHECK: lanes 36 7
  printf.print_format "lanes {} {}\n", %l0 : f64, %l1 : f64
  // @inplace with x = [1, 2, 3] (x is updated in place), dx = [1, 1, 1], c = 3, dc = 0:
  // x1 = 2*2 + 3*1 = 7, dx1 = 2*2*1 + 3*1 = 7
  // x2 = 3*3 + 3*7 = 30, dx2 = 2*3*1 + 3*7 = 27
  // y = 30 > 0: t = exp(30), dt = 27 t; halved k times until <= 1:
  // h = t / 2^k, dh = dt / 2^k with k = ceil(30 / ln 2) = 44:
  // h = exp(30) / 2^44 = 0.607456, dh = 27 h = 16.4013
  %h, %dh = ad.fwddiff @inplace(%x, %dx, %w, %zero) {activity = [dup, dup], ret_activity = [dup]} : (memref<?xf64>, memref<?xf64>, f64, f64) -> (f64, f64)
  %x2 = memref.load %x[%c2] : memref<?xf64>
  %dx2 = memref.load %dx[%c2] : memref<?xf64>
  // CHECK: inplace 0.607456 16.4013 30 27
  printf.print_format "inplace {} {} {} {}\n", %h : f64, %dh : f64, %x2 : f64, %dx2 : f64
  func.return
}
