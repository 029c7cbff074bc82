// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=GRAD
// RUN: ad-opt %s --forward | filecheck %s --check-prefix=FWD
// RUN: ad-run %s | filecheck %s
// The special dialect's scipy.special functions (adpasses/ops/special.py):
// d expit = r (1 - r) (the forward value reused), d log_expit = expit(-x),
// d logit = 1 / (x (1 - x)), d erfc = -2/sqrt(pi) exp(-x^2),
// d xlogy = (log y, x * (x == 0 ? 0 : 1 / y)).

// GRAD-LABEL: func.func @s_grad_aa_a(%x: f64, %y: f64, %seed: f64) -> (f64, f64)
// GRAD:         %e = special.expit %x : f64
// xlogy's partials: log y for x; x * select(x == 0, 0, 1 / y) for y
// GRAD:         %[[LOGY:.*]] = math.log %y : f64
// GRAD:         arith.cmpf oeq, %x, %{{.*}} : f64
// GRAD:         arith.select
// log_expit's partial: expit(-x)
// GRAD:         %[[NEG:.*]] = arith.negf %x : f64
// GRAD-NEXT:    special.expit %[[NEG]] : f64
// expit's partial reads its result %e
// GRAD:         arith.subf %{{.*}}, %e : f64

// FWD-LABEL: func.func @lg_fwd_d_n(%p: f64, %dp: f64) -> f64
// FWD:         arith.subf
// FWD:         arith.mulf %p,
// FWD:         arith.divf
func.func @s(%x: f64, %y: f64) -> (f64) {
  %e = special.expit %x : f64
  %l = special.log_expit %x : f64
  %c = special.erfc %x : f64
  %w = special.xlogy %x, %y : f64
  %a = arith.addf %e, %l : f64
  %b = arith.addf %c, %w : f64
  %r = arith.addf %a, %b : f64
  func.return %r : f64
}

func.func @lg(%p: f64) -> f64 {
  %r = special.logit %p : f64
  func.return %r : f64
}

func.func @main() {
  %x = arith.constant 0.5 : f64
  %y = arith.constant 2.0 : f64
  %p = arith.constant 0.3 : f64
  %one = arith.constant 1.0 : f64
  %zero = arith.constant 0.0 : f64
  // expit(0.5), log_expit(0.5), logit(0.3), erfc(0.5), xlogy(0.5, 2), xlogy(0, 0)
  // CHECK: 0.622459 -0.474077 -0.847298 0.4795 0.346574 0
  %a = special.expit %x : f64
  %b = special.log_expit %x : f64
  %c = special.logit %p : f64
  %d = special.erfc %x : f64
  %e = special.xlogy %x, %y : f64
  %f = special.xlogy %zero, %zero : f64
  printf.print_format "{} {} {} {} {} {}\n", %a : f64, %b : f64, %c : f64, %d : f64, %e : f64, %f : f64
  // d/dx = expit'(0.5) + expit(-0.5) + erfc'(0.5) + log 2 = 0.235004 + 0.377541 - 0.878783 + 0.693147
  // d/dy = 0.5 / 2; d logit(0.3) = 1 / (0.3 * 0.7), reverse and forward
  // CHECK-NEXT: dx = 0.426909 dy = 0.25 dlogit = 4.7619 4.7619
  %dx, %dy = ad.autodiff @s(%x, %y, %one) {activity = [active, active], ret_activity = [active]} : (f64, f64, f64) -> (f64, f64)
  %dl = ad.autodiff @lg(%p, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  %tl = ad.fwddiff @lg(%p, %one) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  printf.print_format "dx = {} dy = {} dlogit = {} {}\n", %dx : f64, %dy : f64, %dl : f64, %tl : f64
  func.return
}
