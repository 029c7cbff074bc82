// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// A call marked ad.checkpoint (adpasses.checkpoint) is a reverse-mode hint:
// recompute the callee in the reverse sweep instead of taping it. Forward
// mode tapes nothing, so the call is inlined like any other and the tangent
// flows through it (before: "calls '@sq', which has no body to differentiate").
// Hand derivation: main(x) = sin(x*x) * x, d = (2x^2 cos(x^2) + sin(x^2)) dx;
// at x = 0.5, dx = 2: sin(0.25) = 0.247404, 2*(0.5*cos(0.25) + 0.247404) = 1.463720.

// IR-LABEL: func.func @fmain_fwd_d_d(
// IR-NOT:     func.call
// IR:         math.cos
// IR:         func.return

func.func @sq(%x: f64) -> f64 {
  %y = arith.mulf %x, %x : f64
  %s = math.sin %y : f64
  func.return %s : f64
}

func.func @fmain(%x: f64) -> f64 {
  %y = func.call @sq(%x) {ad.checkpoint} : (f64) -> f64
  %z = arith.mulf %y, %x : f64
  func.return %z : f64
}

func.func @main() {
  %x = arith.constant 0.5 : f64
  %dx = arith.constant 2.0 : f64
  %p, %t = ad.fwddiff @fmain(%x, %dx) {activity = [dup], ret_activity = [dup]} : (f64, f64) -> (f64, f64)
  // CHECK: y = 0.123702 dy = 1.46372
  printf.print_format "y = {} dy = {}\n", %p : f64, %t : f64
  func.return
}
