// RUN: ad-run %s | filecheck %s
// Forward over reverse: ad.fwddiff of a function that calls ad.autodiff
// gives Hessian-vector products (ad-reverse runs first, then ad-forward
// over the gradient it generated, inlined).

// E(x) = sum_i exp(x[i]) * x[i] * x[i-1 mod] ... kept simple:
// E(x) = sum_i x[i] * exp(x[i]) + (sum_i x[i])^2 / 2
// grad_i = exp(x_i)(1 + x_i) + S,   S = sum x
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

// g(x, gx): gx += grad E(x)
func.func @grad(%x: memref<?xf64>, %gx: memref<?xf64>) {
  %one = arith.constant 1.0 : f64
  ad.autodiff @energy(%x, %gx, %one) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  func.return
}

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
  %gx = memref.alloc(%c3) : memref<?xf64>
  %hv = memref.alloc(%c3) : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    %xi = arith.mulf %f, %tenth : f64
    memref.store %xi, %x[%i] : memref<?xf64>
    memref.store %zero, %gx[%i] : memref<?xf64>
    memref.store %zero, %hv[%i] : memref<?xf64>
  }
  // v = e_1: H v = exp(x_1)(2 + x_1) e_1 + ones = [1, 1 + exp(0.1)*2.1, 1]
  memref.store %zero, %v[%c0] : memref<?xf64>
  memref.store %one, %v[%c1] : memref<?xf64>
  memref.store %zero, %v[%c2] : memref<?xf64>
  ad.fwddiff @grad(%x, %v, %gx, %hv) {activity = [dup, dup], ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>) -> ()
  %h0 = memref.load %hv[%c0] : memref<?xf64>
  %h1 = memref.load %hv[%c1] : memref<?xf64>
  %h2 = memref.load %hv[%c2] : memref<?xf64>
  // CHECK: hv 1 3.32086 1
  printf.print_format "hv {} {} {}\n", %h0 : f64, %h1 : f64, %h2 : f64
  // the gradient itself, computed on the way: exp(x_i)(1 + x_i) + 0.3
  %g1 = memref.load %gx[%c1] : memref<?xf64>
  // CHECK: grad 1.51569
  printf.print_format "grad {}\n", %g1 : f64
  func.return
}
