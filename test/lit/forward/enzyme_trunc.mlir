// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/trunc.mlir: arith.truncf f64 -> f32; the tangent is
// truncated the same way.
// Hand derivation: d truncf(x) = truncf(dx); at x = 1.5, dx = 0.1:
// f32(0.1) = 0.100000001490116, printed 0.1.

// IR-LABEL: func.func @f_fwd_d_d(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64) -> (f32, f32)
// IR-NEXT:    %[[Y:.*]] = arith.truncf %[[X]] : f64 to f32
// IR-NEXT:    %[[DY:.*]] = arith.truncf %[[DX]] : f64 to f32
// IR-NEXT:    func.return %[[Y]], %[[DY]] : f32, f32

func.func @f(%x: f64) -> f32 {
  %y = arith.truncf %x : f64 to f32
  func.return %y : f32
}

func.func @main() {
  %x = arith.constant 1.5 : f64
  %dx = arith.constant 0.1 : f64
  %p, %t = ad.fwddiff @f(%x, %dx) {activity = [dup], ret_activity = [dup]} : (f64, f64) -> (f32, f32)
  %t64 = arith.extf %t : f32 to f64
  %p64 = arith.extf %p : f32 to f64
  // CHECK: y = 1.5 dy = 0.1
  printf.print_format "y = {} dy = {}\n", %p64 : f64, %t64 : f64
  func.return
}
