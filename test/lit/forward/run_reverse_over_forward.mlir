// RUN: ad-run %s | filecheck %s
// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// Reverse over forward: ad.autodiff of a function that calls ad.fwddiff.
// `ad-opt --forward` runs ad-forward{inner=true} first (requests whose
// callee holds no ad.autodiff), so @dir calls a plain tangent function
// when ad-reverse differentiates it: grad_x <grad E(x), v> = H v, the
// same Hessian-vector product as forward over reverse (run_hvp.mlir).

// E(x) = sum_i x[i] * exp(x[i]) + (sum_i x[i])^2 / 2
// H = diag(exp(x_i)(2 + x_i)) + ones*ones^T
func.func @energy(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z, %sum = %z) -> (f64, f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %e = math.exp %a : f64
    %p = arith.mulf %a, %e : f64
    %s = arith.addf %acc, %p : f64
    %t = arith.addf %sum, %a : f64
    scf.yield %s, %t : f64, f64
  }
  %sq = arith.mulf %r#1, %r#1 : f64
  %hs = arith.mulf %sq, %half : f64
  %res = arith.addf %r#0, %hs : f64
  func.return %res : f64
}

// dir(x, v) = d/de E(x + e v) = <grad E(x), v>
func.func @dir(%x: memref<?xf64>, %v: memref<?xf64>) -> f64 {
  %d = ad.fwddiff @energy(%x, %v) {activity = [dup], ret_activity = [dupnoneed]} : (memref<?xf64>, memref<?xf64>) -> f64
  func.return %d : f64
}

// IR: func.func @energy_fwd_d_n(
// IR: func.func @dir(
// IR-NEXT: func.call @energy_fwd_d_n(
// IR: func.func @dir_grad_dd_a(
// IR-NOT: ad.fwddiff
// IR-NOT: func.call
// IR: func.func @dir_grad_dc_a(
// IR-NOT: ad.fwddiff
// IR-NOT: func.call
// IR: func.func @main(
// IR-NOT: ad.autodiff
// IR: func.call @dir_grad_dc_a(
// IR: func.call @dir_grad_dd_a(

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %tenth = arith.constant 0.1 : f64
  %x = memref.alloc(%c3) : memref<?xf64>
  %v = memref.alloc(%c3) : memref<?xf64>
  %hv = memref.alloc(%c3) : memref<?xf64>
  %gv = memref.alloc(%c3) : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    %xi = arith.mulf %f, %tenth : f64
    memref.store %xi, %x[%i] : memref<?xf64>
    memref.store %zero, %hv[%i] : memref<?xf64>
    memref.store %zero, %gv[%i] : memref<?xf64>
  }
  // v = e_1: H v = exp(x_1)(2 + x_1) e_1 + ones = [1, 1 + exp(0.1)*2.1, 1]
  memref.store %zero, %v[%c0] : memref<?xf64>
  memref.store %one, %v[%c1] : memref<?xf64>
  memref.store %zero, %v[%c2] : memref<?xf64>
  ad.autodiff @dir(%x, %hv, %v, %one) {activity = [dup, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, f64) -> ()
  %h0 = memref.load %hv[%c0] : memref<?xf64>
  %h1 = memref.load %hv[%c1] : memref<?xf64>
  %h2 = memref.load %hv[%c2] : memref<?xf64>
  // CHECK: hv 1 3.32086 1
  printf.print_format "hv {} {} {}\n", %h0 : f64, %h1 : f64, %h2 : f64
  // Both arguments dup: d/dv <grad E(x), v> = grad E(x) = exp(x_i)(1 + x_i) + 0.3
  %hv2 = memref.alloc(%c3) : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    memref.store %zero, %hv2[%i] : memref<?xf64>
  }
  ad.autodiff @dir(%x, %hv2, %v, %gv, %one) {activity = [dup, dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, f64) -> ()
  %g0 = memref.load %gv[%c0] : memref<?xf64>
  %g1 = memref.load %gv[%c1] : memref<?xf64>
  %k1 = memref.load %hv2[%c1] : memref<?xf64>
  // CHECK: grad 1.3 1.51569 hv 3.32086
  printf.print_format "grad {} {} hv {}\n", %g0 : f64, %g1 : f64, %k1 : f64
  func.return
}
