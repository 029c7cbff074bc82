// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/batch_ext.mlir: width 2 through arith.extf f32 -> f64.
// Hand derivation: d extf(x) = extf(dx) per lane; x = 1.5, dx = (0.25, -2):
// (0.25, -2).

// IR-LABEL: func.func @ext_fwd_d_n_w2(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f32, %[[D0:[a-z0-9_]+]]: f32, %[[D1:[a-z0-9_]+]]: f32) -> (f64, f64)
// IR:         arith.extf %[[D0]] : f32 to f64
// IR:         arith.extf %[[D1]] : f32 to f64

func.func @ext(%x: f32) -> f64 {
  %r = arith.extf %x : f32 to f64
  func.return %r : f64
}

func.func @main() {
  %x = arith.constant 1.5 : f32
  %d0 = arith.constant 0.25 : f32
  %d1 = arith.constant -2.0 : f32
  %t:2 = ad.fwddiff @ext(%x, %d0, %d1) {activity = [dup], ret_activity = [dupnoneed], width = 2} : (f32, f32, f32) -> (f64, f64)
  // CHECK: lanes = 0.25 -2
  printf.print_format "lanes = {} {}\n", %t#0 : f64, %t#1 : f64
  func.return
}
