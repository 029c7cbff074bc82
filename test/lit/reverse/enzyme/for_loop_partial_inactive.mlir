// Enzyme-MLIR ReverseMode/for_loop_partial_inactive.mlir: a loop with two
// iter_args, one feeding the result (a product), one never used after the
// loop (a running sum of the products); scf.for and affine.for.
// Hand derivation: f(x, n) = x^n, df/dx = n x^(n-1): at x = 1.5, n = 4: 13.5;
// the unused sum contributes nothing.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// Only the product is reversed: the reverse loop carries its adjoint and
// x's, not the unused sum's.
// IR-LABEL: func.func @some_res_inactive_grad_ac_a(
// IR:         scf.for {{.*}} -> (f32, f32) {
// IR:         scf.for {{.*}} -> (f32, f32) {
// IR-NOT:       scf.for
// IR:         func.return
// IR-LABEL: func.func @affine_some_res_inactive_grad_ac_a(
// IR-NOT:     affine.for
// IR:         func.return
// CHECK: scf 13.5 affine 13.5

func.func private @some_res_inactive(%x: f32, %ub: index) -> f32 {
  %lb = arith.constant 0 : index
  %step = arith.constant 1 : index
  %sum_0 = arith.constant 1.0 : f32
  %sum, %unused = scf.for %iv = %lb to %ub step %step iter_args(%sum_iter = %sum_0, %inactive = %sum_0) -> (f32, f32) {
    %sum_next = arith.mulf %sum_iter, %x : f32
    %inactive_next = arith.addf %sum_next, %inactive : f32
    scf.yield %sum_next, %inactive_next : f32, f32
  }
  func.return %sum : f32
}

func.func private @affine_some_res_inactive(%x: f32, %ub: index) -> f32 {
  %sum_0 = arith.constant 1.0 : f32
  %sum, %unused = affine.for %iv = 0 to %ub iter_args(%sum_iter = %sum_0, %inactive = %sum_0) -> (f32, f32) {
    %sum_next = arith.mulf %sum_iter, %x : f32
    %inactive_next = arith.addf %sum_next, %inactive : f32
    affine.yield %sum_next, %inactive_next : f32, f32
  }
  func.return %sum : f32
}

func.func @main() {
  %x = arith.constant 1.5 : f32
  %n = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %a = ad.autodiff @some_res_inactive(%x, %n, %one) {activity = [active, const], ret_activity = [active]} : (f32, index, f32) -> f32
  %b = ad.autodiff @affine_some_res_inactive(%x, %n, %one) {activity = [active, const], ret_activity = [active]} : (f32, index, f32) -> f32
  printf.print_format "scf {} affine {}\n", %a : f32, %b : f32
  func.return
}
