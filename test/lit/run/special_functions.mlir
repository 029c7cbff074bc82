// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=GRAD
// RUN: ad-opt %s --forward | filecheck %s --check-prefix=FWD
// RUN: ad-run %s | filecheck %s
// The special dialect (adpasses/ops/special.py): d lgamma = digamma,
// d gamma = gamma * digamma, d digamma = polygamma(1, .),
// d polygamma(n, .) = polygamma(n + 1, .) (the order an integer, not
// differentiated), so Hessians close over the dialect.

// gamma's partial reads its result (r * digamma(x)): the forward value is reused.
// GRAD-LABEL: func.func @f_grad_a_a(%x: f64, %seed: f64) -> f64
// GRAD-NEXT:    %g = special.gamma %x : f64
// GRAD-NEXT:    %[[DG:.*]] = special.digamma %g : f64
// GRAD-NEXT:    %[[A:.*]] = arith.mulf %seed, %[[DG]] : f64
// GRAD-NEXT:    %[[S:.*]] = arith.addf %seed, %[[A]] : f64
// GRAD-NEXT:    %[[D:.*]] = special.digamma %x : f64
// GRAD-NEXT:    %[[GD:.*]] = arith.mulf %g, %[[D]] : f64
// GRAD-NEXT:    arith.mulf %[[S]], %[[GD]] : f64
// digamma's partial is polygamma(1, .); polygamma(2, .)'s is polygamma(2 + 1, .) (folded)
// GRAD-LABEL: func.func @p_grad_a_a(%x: f64, %seed: f64) -> f64
// GRAD-NEXT:    %[[ONE:.*]] = arith.constant 1 : i32
// GRAD-NEXT:    %[[THREE:.*]] = arith.constant 3 : i32
// GRAD-NEXT:    %[[P3:.*]] = special.polygamma %x, %[[THREE]] : f64, i32
// GRAD-NEXT:    arith.mulf %seed, %[[P3]] : f64
// GRAD-NEXT:    %[[P1:.*]] = special.polygamma %x, %[[ONE]] : f64, i32
// GRAD-NEXT:    arith.mulf %seed, %[[P1]] : f64

// FWD-LABEL: func.func @p_fwd_d_n(%x: f64, %dx: f64) -> f64
// FWD:         %[[P1:.*]] = special.polygamma %x, %{{.*}} : f64, i32
// FWD-NEXT:    arith.mulf %dx, %[[P1]] : f64
// FWD:         %[[P3:.*]] = special.polygamma %x, %{{.*}} : f64, i32
// FWD-NEXT:    arith.mulf %dx, %[[P3]] : f64
func.func @f(%x: f64) -> f64 {
  %g = special.gamma %x : f64
  %l = special.lgamma %g : f64
  %s = arith.addf %g, %l : f64
  func.return %s : f64
}

func.func @p(%x: f64) -> f64 {
  %d = special.digamma %x : f64
  %two = arith.constant 2 : i32
  %p = special.polygamma %x, %two : f64, i32
  %s = arith.addf %d, %p : f64
  func.return %s : f64
}

func.func @main() {
  %half = arith.constant 0.5 : f64
  %one = arith.constant 1.0 : f64
  %five = arith.constant 5.0 : f64
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  // lgamma(0.5) = log(sqrt(pi)), gamma(5) = 24, digamma(1) = -euler_gamma,
  // polygamma(1, 1) = pi^2/6, polygamma(2, 1) = -2 zeta(3)
  // CHECK: 0.572365 24 -0.577216 1.64493 -2.40411
  %a = special.lgamma %half : f64
  %b = special.gamma %five : f64
  %c = special.digamma %one : f64
  %d = special.polygamma %one, %c1 : f64, i32
  %e = special.polygamma %one, %c2 : f64, i32
  printf.print_format "{} {} {} {} {}\n", %a : f64, %b : f64, %c : f64, %d : f64, %e : f64
  // d/dx [gamma(x) + lgamma(gamma(x))] = gamma(x) psi(x) (1 + psi(gamma(x))) at x = 2.5
  // and d/dx [psi(x) + psi''(x)] = psi'(x) + psi'''(x), reverse and forward
  // CHECK-NEXT: df = 0.80722 dp = 0.714264 0.714264
  %x = arith.constant 2.5 : f64
  %df = ad.autodiff @f(%x, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  %dp = ad.autodiff @p(%x, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  %tp = ad.fwddiff @p(%x, %one) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  printf.print_format "df = {} dp = {} {}\n", %df : f64, %dp : f64, %tp : f64
  func.return
}
