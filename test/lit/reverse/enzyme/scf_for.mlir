// Enzyme-MLIR ReverseMode/scf_for.mlir: a product carried through scf.for
// with a dynamic trip count (Enzyme asks with --enzyme-wrap; here both the
// op and --reverse-wrap).
// Hand derivation: reduce(x, n) = x^n (1 times x, n times); d/dx = n x^(n-1):
// at x = 1.5, n = 4: 4 * 3.375 = 13.5; n = 0: 0.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// RUN: ad-opt %s --reverse-wrap="fn=reduce activities=active,const rets=active" | filecheck %s --check-prefix=WRAP

// The loop-carried product is taped (one f32 per iteration, Enzyme's
// tensor cache) and read back by a reverse loop that carries both the
// adjoint of the product and that of x.
// IR-LABEL: func.func @reduce_grad_ac_a(%x: f32, %ub: index, %seed: f32) -> f32
// IR:         memref.alloc(%{{.*}}) {ad.workspace} : memref<?xf32>
// IR:         scf.for
// IR:           memref.store %sum_iter
// IR:         scf.for {{.*}} -> (f32, f32) {
// IR:           memref.load
// IR:           arith.mulf
// WRAP-LABEL: func.func @reduce_reverse(%x: f32, %ub: index, %d_ret0: f32) -> f32

func.func @reduce(%x: f32, %ub: index) -> f32 {
  %lb = arith.constant 0 : index
  %step = arith.constant 1 : index
  %sum_0 = arith.constant 1.0 : f32
  %sum = scf.for %iv = %lb to %ub step %step iter_args(%sum_iter = %sum_0) -> (f32) {
    %sum_next = arith.mulf %sum_iter, %x : f32
    scf.yield %sum_next : f32
  }
  func.return %sum : f32
}

func.func @main() {
  %x = arith.constant 1.5 : f32
  %n = arith.constant 4 : index
  %n0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %d = ad.autodiff @reduce(%x, %n, %one) {activity = [active, const], ret_activity = [active]} : (f32, index, f32) -> f32
  %d0 = ad.autodiff @reduce(%x, %n0, %one) {activity = [active, const], ret_activity = [active]} : (f32, index, f32) -> f32
  // CHECK: reduce 13.5 0
  printf.print_format "reduce {} {}\n", %d : f32, %d0 : f32
  func.return
}
