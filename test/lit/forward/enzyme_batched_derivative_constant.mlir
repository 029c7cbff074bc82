// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/batched_derivative_constant.mlir, on a scalar (the
// Enzyme file uses tensor<4xf32>, which adpasses does not differentiate): in
// width 2, the tangent rule of atan contains an operand-less constant (the 1
// of 1 + x^2) that every lane uses.
// Hand derivation: d atan(x) = dx/(1 + x^2); x = 1, dx = (2, -1): (1, -0.5).

// IR-LABEL: func.func @atan_fwd_d_n_w2(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f32, %[[D0:[a-z0-9_]+]]: f32, %[[D1:[a-z0-9_]+]]: f32) -> (f32, f32)
// IR:         arith.constant 1.000000e+00 : f32
// IR:         arith.divf %[[D0]], %{{.*}} : f32
// IR:         arith.divf %[[D1]], %{{.*}} : f32

func.func @atan(%x: f32) -> f32 {
  %r = math.atan %x : f32
  func.return %r : f32
}

func.func @main() {
  %x = arith.constant 1.0 : f32
  %d0 = arith.constant 2.0 : f32
  %d1 = arith.constant -1.0 : f32
  %t:2 = ad.fwddiff @atan(%x, %d0, %d1) {activity = [dup], ret_activity = [dupnoneed], width = 2} : (f32, f32, f32) -> (f32, f32)
  %t0 = arith.extf %t#0 : f32 to f64
  %t1 = arith.extf %t#1 : f32 to f64
  // CHECK: lanes = 1 -0.5
  printf.print_format "lanes = {} {}\n", %t0 : f64, %t1 : f64
  func.return
}
