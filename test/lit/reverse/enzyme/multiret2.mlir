// Enzyme-MLIR ReverseMode/multiret2.mlir: a callee with four results, a
// helper called four times inside it, and a two-result helper, all summed.
// Enzyme keeps @inner_1arg_4ret as a rule pair; adpasses inlines it.
// Hand derivation: p = 1.5 x; inner(p) = (a, b, c, d) = (3p, 13.5p,
// 20.25p + 4, 7.5 c); helper2(a, b) = (a + b, a b); the result
// a + b + a b + c + d = 188.625 p + 40.5 p^2 + 34 = 282.9375 x + 91.125 x^2 + 34,
// derivative 282.9375 + 182.25 x. At x = 0.5: value 198.25, derivative 374.0625.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// IR-LABEL: func.func @outer_to_diff_grad_a_a_p(%arg0: f64, %seed: f64) -> (f64, f64)
// IR-NOT:     func.call
// IR:         func.return
// CHECK: outer 198.25 374.062

func.func private @helper(%x: f64) -> f64 {
  %c = arith.constant 1.5 : f64
  %r = arith.mulf %x, %c : f64
  func.return %r : f64
}

func.func private @inner_1arg_4ret(%arg0: f64) -> (f64, f64, f64, f64) {
  %cst2 = arith.constant 2.0 : f64
  %cst3 = arith.constant 3.0 : f64
  %cst4 = arith.constant 4.0 : f64
  %cst5 = arith.constant 5.0 : f64
  %h1 = func.call @helper(%arg0) : (f64) -> f64
  %a = arith.mulf %h1, %cst2 : f64
  %h2 = func.call @helper(%a) : (f64) -> f64
  %b = arith.mulf %h2, %cst3 : f64
  %h3 = func.call @helper(%b) : (f64) -> f64
  %c = arith.addf %h3, %cst4 : f64
  %h4 = func.call @helper(%c) : (f64) -> f64
  %d = arith.mulf %h4, %cst5 : f64
  func.return %a, %b, %c, %d : f64, f64, f64, f64
}

func.func private @helper2(%x: f64, %y: f64) -> (f64, f64) {
  %sum = arith.addf %x, %y : f64
  %prod = arith.mulf %x, %y : f64
  func.return %sum, %prod : f64, f64
}

func.func @outer_to_diff(%arg0: f64) -> f64 {
  %prep = func.call @helper(%arg0) : (f64) -> f64
  %results:4 = func.call @inner_1arg_4ret(%prep) : (f64) -> (f64, f64, f64, f64)
  %h:2 = func.call @helper2(%results#0, %results#1) : (f64, f64) -> (f64, f64)
  %sum1 = arith.addf %h#0, %h#1 : f64
  %sum2 = arith.addf %sum1, %results#2 : f64
  %sum3 = arith.addf %sum2, %results#3 : f64
  func.return %sum3 : f64
}

func.func @main() {
  %x = arith.constant 0.5 : f64
  %seed = arith.constant 1.0 : f64
  %r:2 = ad.autodiff @outer_to_diff(%x, %seed) {activity = [active], ret_activity = [active], with_primal} : (f64, f64) -> (f64, f64)
  printf.print_format "outer {} {}\n", %r#0 : f64, %r#1 : f64
  func.return
}
