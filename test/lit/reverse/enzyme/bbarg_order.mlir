// Enzyme-MLIR ReverseMode/bbarg-order.mlir: a body written with cf
// branches whose block ^bb1 branches to itself (a do-while on a block
// argument). adpasses lifts the loop to scf.while (transforms/lift_cf.py)
// and differentiates that: bbargs(x) = x + 1 for x >= -1 (the loop exits at
// once), so d/dx = 1 times the seed; at x = 2, seed 3: 3, and at x = 0.5,
// seed -1.5: -1.5.
// RUN: ad-opt %s --reverse | ad-run | filecheck %s
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// CHECK: dbbargs 3 -1.5
// IR-LABEL: func.func @bbargs_grad_a_a(%x: f64, %seed: f64) -> f64 {
// IR:         scf.while
// IR:           arith.cmpf ult
// IR:           scf.condition
// IR:         } attributes {ad.counted}
// IR-NOT:     {{ cf\.(br|cond_br)}}

func.func @bbargs(%x: f64) -> f64 {
  %cst1 = arith.constant 1.000000e+00 : f64
  %2 = arith.addf %x, %cst1 : f64
  cf.br ^bb1(%2 : f64)
^bb1(%1 : f64):
  %cst = arith.constant 0.000000e+00 : f64
  %flag = arith.cmpf ult, %1, %cst : f64
  cf.cond_br %flag, ^bb1(%1 : f64), ^bb2(%1 : f64)
^bb2(%ret : f64):
  func.return %ret : f64
}
func.func @main() {
  %x = arith.constant 2.0 : f64
  %s = arith.constant 3.0 : f64
  %d = ad.autodiff @bbargs(%x, %s) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  %y = arith.constant 0.5 : f64
  %t = arith.constant -1.5 : f64
  %e = ad.autodiff @bbargs(%y, %t) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "dbbargs {} {}\n", %d : f64, %e : f64
  func.return
}
