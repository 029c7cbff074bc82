// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/func.mlir: the differentiated function calls
// another (in f32); the callee's tangent flows through the call.
// Hand derivation: main(x) = square(x) = x*x, d = 2*x*dx; at x = 3, dx = 0.5:
// (9, 3).

// The callee is inlined into the tangent function: no call is left.
// IR-LABEL: func.func @fmain_fwd_d_d(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f32, %[[DX:[a-z0-9_]+]]: f32) -> (f32, f32)
// IR-NOT:     func.call
// IR:         arith.mulf %[[DX]], %[[X]] : f32
// IR:         func.return

func.func @square(%x: f32) -> f32 {
  %y = arith.mulf %x, %x : f32
  func.return %y : f32
}

func.func @fmain(%x: f32) -> f32 {
  %y = func.call @square(%x) : (f32) -> f32
  func.return %y : f32
}

func.func @main() {
  %x = arith.constant 3.0 : f32
  %dx = arith.constant 0.5 : f32
  %p, %t = ad.fwddiff @fmain(%x, %dx) {activity = [dup], ret_activity = [dup]} : (f32, f32) -> (f32, f32)
  %p64 = arith.extf %p : f32 to f64
  %t64 = arith.extf %t : f32 to f64
  // CHECK: y = 9 dy = 3
  printf.print_format "y = {} dy = {}\n", %p64 : f64, %t64 : f64
  func.return
}
