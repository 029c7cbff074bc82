// Enzyme-MLIR ReverseMode/square.mlir: d(x * x)/dx, the seed scaling it.
// Hand derivation: f = x^2, df/dx * dr = 2 x dr; at x = 1.5, dr = 0.5: 1.5;
// at x = -3, dr = 2: -12.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// One product with the seed, added to itself (Enzyme's simplified form).
// IR-LABEL: func.func @square_grad_a_a(%x: f64, %seed: f64) -> f64
// IR-NEXT:    %[[M:.*]] = arith.mulf %seed, %x : f64
// IR-NEXT:    %[[D:.*]] = arith.addf %[[M]], %[[M]] : f64
// IR-NEXT:    func.return %[[D]] : f64

func.func @square(%x: f64) -> f64 {
  %next = arith.mulf %x, %x : f64
  func.return %next : f64
}

func.func @dsquare(%x: f64, %dr: f64) -> f64 {
  %r = ad.autodiff @square(%x, %dr) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %r : f64
}

func.func @main() {
  %x = arith.constant 1.5 : f64
  %dr = arith.constant 0.5 : f64
  %x2 = arith.constant -3.0 : f64
  %dr2 = arith.constant 2.0 : f64
  %a = func.call @dsquare(%x, %dr) : (f64, f64) -> f64
  %b = func.call @dsquare(%x2, %dr2) : (f64, f64) -> f64
  // CHECK: dsquare 1.5 -12
  printf.print_format "dsquare {} {}\n", %a : f64, %b : f64
  func.return
}
