// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/batched_scalar.mlir: width 2 (vector mode). Enzyme
// passes the two tangents as one tensor<2xf64>; ad.fwddiff takes them as two
// operands, lane 0 first, and returns one tangent per lane.
// Hand derivation: d(x*x) = 2*x*dx per lane; x = 3, dx = (0.5, -1): (3, -6).

// One tangent argument and one tangent result per lane.
// IR-LABEL: func.func @square_fwd_d_n_w2(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[D0:[a-z0-9_]+]]: f64, %[[D1:[a-z0-9_]+]]: f64) -> (f64, f64)
// IR:         arith.mulf %[[D0]], %[[X]] : f64
// IR:         arith.mulf %[[D1]], %[[X]] : f64

func.func @square(%x: f64) -> f64 {
  %y = arith.mulf %x, %x : f64
  func.return %y : f64
}

func.func @main() {
  %x = arith.constant 3.0 : f64
  %d0 = arith.constant 0.5 : f64
  %d1 = arith.constant -1.0 : f64
  %t:2 = ad.fwddiff @square(%x, %d0, %d1) {activity = [dup], ret_activity = [dupnoneed], width = 2} : (f64, f64, f64) -> (f64, f64)
  // CHECK: lanes = 3 -6
  printf.print_format "lanes = {} {}\n", %t#0 : f64, %t#1 : f64
  func.return
}
