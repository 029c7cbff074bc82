// Enzyme-MLIR ReverseMode/mul_strongzero.mlir, and `strong_zero` through
// an inf and a nan partial. With `strong_zero` each scalar op's adjoint is
// `g == 0 ? 0 : g * partial` (Enzyme's form), so a zero seed gives a zero
// adjoint where the partial is inf or nan.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// RUN: ad-opt %s | ad-opt | filecheck %s --check-prefix=ROUND

// Enzyme's function: x * x, with the flag. d(x^2)/dx * dr = 2 x dr: at
// x = 1.5, dr = 0.5: 1.5; at dr = 0: 0.
// The same request without the flag is another gradient, with no select.
// IR-LABEL: func.func @square_grad_a_a(%x: f64, %seed: f64) -> f64
// IR-NOT:     arith.select
// IR:         func.return
// IR-LABEL: func.func @square_grad_a_a_z(%x: f64, %seed: f64) -> f64
// IR-NEXT:    %[[M:.*]] = arith.mulf %seed, %x : f64
// IR-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// IR-NEXT:    %[[C:.*]] = arith.cmpf oeq, %seed, %[[Z]] : f64
// IR-NEXT:    %[[S:.*]] = arith.select %[[C]], %[[Z]], %[[M]] : f64
// IR-NEXT:    %[[D:.*]] = arith.addf %[[S]], %[[S]] : f64
// IR-NEXT:    func.return %[[D]] : f64

// Two results, r0 = x * y and r1 = sqrt(x) + log(x), seeded (s0, 0) at
// x = 0: d r1/dx = 1/(2 sqrt 0) + 1/0 = inf, times the zero seed. By hand:
// dx = s0 * y + 0 * inf, dy = s0 * x. Strong zero: dx = s0 * y = 2 * 3 = 6,
// dy = 2 * 0 = 0; without it, dx is nan (0 * inf), as IEEE says.
// Each product of a seed is guarded once per seed (one compare each): the
// two partials of r1 (1/x, 0.5/sqrt x) and the two of r0 (y, x).
// IR-LABEL: func.func @two_grad_aa_aa_z(
// IR-COUNT-2: arith.cmpf oeq
// IR-NOT:     arith.cmpf
// IR:         func.return

// ROUND: ad.autodiff @square(%{{.*}}, %{{.*}}) {activity = [active], ret_activity = [active], strong_zero} : (f64, f64) -> f64

func.func @square(%x: f64) -> f64 {
  %r = arith.mulf %x, %x : f64
  func.return %r : f64
}

func.func @two(%x: f64, %y: f64) -> (f64, f64) {
  %p = arith.mulf %x, %y : f64
  %s = math.sqrt %x : f64
  %l = math.log %x : f64
  %q = arith.addf %s, %l : f64
  func.return %p, %q : f64, f64
}

func.func @main() {
  %x = arith.constant 1.5 : f64
  %half = arith.constant 0.5 : f64
  %zero = arith.constant 0.0 : f64
  %d = ad.autodiff @square(%x, %half) {activity = [active], ret_activity = [active], strong_zero} : (f64, f64) -> f64
  %d0 = ad.autodiff @square(%x, %zero) {activity = [active], ret_activity = [active], strong_zero} : (f64, f64) -> f64
  %dn = ad.autodiff @square(%x, %half) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  // CHECK: square 1.5 0 1.5
  printf.print_format "square {} {} {}\n", %d : f64, %d0 : f64, %dn : f64

  %y = arith.constant 3.0 : f64
  %s0 = arith.constant 2.0 : f64
  %dx, %dy = ad.autodiff @two(%zero, %y, %s0, %zero) {activity = [active, active], ret_activity = [active, active], strong_zero} : (f64, f64, f64, f64) -> (f64, f64)
  // CHECK-NEXT: strong 6 0
  printf.print_format "strong {} {}\n", %dx : f64, %dy : f64
  %wx, %wy = ad.autodiff @two(%zero, %y, %s0, %zero) {activity = [active, active], ret_activity = [active, active]} : (f64, f64, f64, f64) -> (f64, f64)
  // CHECK-NEXT: weak nan 0
  printf.print_format "weak {} {}\n", %wx : f64, %wy : f64
  func.return
}
