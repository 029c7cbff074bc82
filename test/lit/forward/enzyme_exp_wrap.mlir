// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/exp_wrap.mlir: exp in f32, forward (dup -> dup) and
// reverse (active -> active) derivatives of the same function.
// Hand derivation: d exp(x) = exp(x)*dx; at x = 1, dx = 2: (2.71828, 5.43656);
// reverse with seed 1: exp(1) = 2.71828.

// IR-LABEL: func.func @fexp_fwd_d_d(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f32, %[[DX:[a-z0-9_]+]]: f32) -> (f32, f32)
// IR-NEXT:    %[[Y:.*]] = math.exp %[[X]] : f32
// IR-NEXT:    %[[DY:.*]] = arith.mulf %[[DX]], %[[Y]] : f32
// IR-NEXT:    func.return %[[Y]], %[[DY]] : f32, f32

func.func @fexp(%x: f32) -> f32 {
  %y = math.exp %x : f32
  func.return %y : f32
}

func.func @main() {
  %x = arith.constant 1.0 : f32
  %dx = arith.constant 2.0 : f32
  %seed = arith.constant 1.0 : f32
  %p, %t = ad.fwddiff @fexp(%x, %dx) {activity = [dup], ret_activity = [dup]} : (f32, f32) -> (f32, f32)
  %g = ad.autodiff @fexp(%x, %seed) {activity = [active], ret_activity = [active]} : (f32, f32) -> f32
  %p64 = arith.extf %p : f32 to f64
  %t64 = arith.extf %t : f32 to f64
  %g64 = arith.extf %g : f32 to f64
  // CHECK: fwd: y = 2.71828 dy = 5.43656
  printf.print_format "fwd: y = {} dy = {}\n", %p64 : f64, %t64 : f64
  // CHECK-NEXT: rev: dx = 2.71828
  printf.print_format "rev: dx = {}\n", %g64 : f64
  func.return
}
