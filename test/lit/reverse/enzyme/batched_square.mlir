// Enzyme-MLIR ReverseMode/batched_square.mlir: width 2 (Enzyme's seed is a
// tensor<2xf64>; adpasses' vector reverse mode takes 2 scalar seeds and
// returns 2 derivatives, lane 0 first).
// Hand derivation: d(x^2)/dx = 2x per lane: at x = 1.5, seeds (1, 0.5): (3, 1.5).
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// IR-LABEL: func.func @square_grad_a_a_w2(%x: f64, %seed: f64, %seed_1: f64) -> (f64, f64)
// IR-COUNT-2: arith.mulf
// IR:         func.return
// CHECK: lanes 3 1.5

func.func @square(%x: f64) -> f64 {
  %next = arith.mulf %x, %x : f64
  func.return %next : f64
}

func.func @main() {
  %x = arith.constant 1.5 : f64
  %s0 = arith.constant 1.0 : f64
  %s1 = arith.constant 0.5 : f64
  %d0, %d1 = ad.autodiff @square(%x, %s0, %s1) {activity = [active], ret_activity = [active], width = 2} : (f64, f64, f64) -> (f64, f64)
  printf.print_format "lanes {} {}\n", %d0 : f64, %d1 : f64
  func.return
}
