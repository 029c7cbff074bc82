// strong_zero is a reverse-mode flag: on ad.fwddiff, or asked of a forward
// wrapper, it is a one-line error with its location; on ad.autodiff it
// survives printing and parsing, and --reverse-wrap writes it.
// RUN: not ad-opt %S/Inputs/strong_zero_fwddiff.mlir 2>&1 | filecheck %s --check-prefix=FWD
// RUN: not ad-opt %s --forward-wrap="fn=f strong-zero" 2>&1 | filecheck %s --check-prefix=WRAPF
// RUN: ad-opt %s --reverse-wrap="fn=f strong-zero" | filecheck %s --check-prefix=WRAPR
// RUN: ad-opt %s -p 'ad-wrap{fn="f" strong-zero=true}' | filecheck %s --check-prefix=OP

// FWD: strong_zero_fwddiff.mlir:6:89: error: unknown ad.fwddiff entry 'strong_zero' (expected activity, ret_activity, width)
// FWD-NOT: Traceback
// WRAPF: error: ad-wrap{fn=f}: strong-zero is a reverse-mode option
// WRAPF-NOT: Traceback
// WRAPR-LABEL: func.func @f_grad_a_a_z(%x: f64, %seed: f64) -> f64
// WRAPR:         arith.cmpf oeq, %seed
// WRAPR:         arith.select
// WRAPR-LABEL: func.func @f_reverse(%x: f64, %d_ret0: f64) -> f64
// WRAPR-NEXT:    func.call @f_grad_a_a_z(%x, %d_ret0)
// OP: ad.autodiff @f(%x, %d_ret0) {activity = [active], ret_activity = [active], strong_zero} : (f64, f64) -> f64

func.func @f(%x: f64) -> f64 {
  %r = math.log %x : f64
  func.return %r : f64
}
