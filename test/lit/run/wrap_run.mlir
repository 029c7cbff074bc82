// Derivatives asked for on the command line (--reverse-wrap, --forward-wrap)
// and called from other code through a declaration, which the wrapper
// replaces. f(x, s) = s * sum x_i^2 at x = (1.5, -2, 0.25), s = 0.5:
// the gradient is df/dx_i = 2 s x_i = x_i and df/ds = sum x_i^2 = 6.3125;
// the tangent along dx = (1, 1, 1), ds = 2 is sum(2 s x_i) + 2 * 6.3125 = 12.375.
// RUN: ad-opt %s --reverse-wrap="fn=f" --forward-wrap="fn=f name=tf" | ad-run | filecheck %s
// CHECK: gradient 1.5 -2 0.25 6.3125
// CHECK: tangent 3.15625 12.375

func.func @f(%x: memref<?xf64>, %s: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %w = arith.mulf %v, %s : f64
    %w2 = arith.mulf %w, %v : f64
    %a = arith.addf %acc, %w2 : f64
    scf.yield %a : f64
  }
  func.return %r : f64
}
func.func private @f_reverse(memref<?xf64>, memref<?xf64>, f64, f64) -> f64
func.func private @tf(memref<?xf64>, memref<?xf64>, f64, f64) -> (f64, f64)
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %x = memref.alloc(%c3) : memref<?xf64>
  %dx = memref.alloc(%c3) : memref<?xf64>
  %a = arith.constant 1.5 : f64
  %b = arith.constant -2.0 : f64
  %c = arith.constant 0.25 : f64
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %two = arith.constant 2.0 : f64
  %s = arith.constant 0.5 : f64
  memref.store %a, %x[%c0] : memref<?xf64>
  memref.store %b, %x[%c1] : memref<?xf64>
  memref.store %c, %x[%c2] : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    memref.store %zero, %dx[%i] : memref<?xf64>
  }
  %ds = func.call @f_reverse(%x, %dx, %s, %one) : (memref<?xf64>, memref<?xf64>, f64, f64) -> f64
  %g0 = memref.load %dx[%c0] : memref<?xf64>
  %g1 = memref.load %dx[%c1] : memref<?xf64>
  %g2 = memref.load %dx[%c2] : memref<?xf64>
  printf.print_format "gradient {} {} {} {}\n", %g0 : f64, %g1 : f64, %g2 : f64, %ds : f64
  scf.for %i = %c0 to %c3 step %c1 {
    memref.store %one, %dx[%i] : memref<?xf64>
  }
  %v, %t = func.call @tf(%x, %dx, %s, %two) : (memref<?xf64>, memref<?xf64>, f64, f64) -> (f64, f64)
  printf.print_format "tangent {} {}\n", %v : f64, %t : f64
  memref.dealloc %x : memref<?xf64>
  memref.dealloc %dx : memref<?xf64>
  func.return
}
