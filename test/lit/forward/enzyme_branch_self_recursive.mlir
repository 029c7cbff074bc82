// RUN: ad-opt %s --forward | ad-run | filecheck %s
// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// Enzyme-MLIR ForwardMode/branch-self-recursive.mlir: a block that branches to
// itself (forever when x < y), passing its argument along; the tangent is a
// block argument beside it.
// Hand derivation (run with x >= y, which leaves at once): sum = x + 1,
// dsum = dx; at x = 2, y = 1, dx = 0.75, dy = 4: (3, 0.75).
// The cf loop is lifted to scf.while (adpasses/transforms/lift_cf.py), whose
// tangent forward mode computes; its before region computes %sum, which
// leaves the loop through scf.condition.
// CHECK: sum = 3 dsum = 0.75
// IR-LABEL: func.func @infinite_fwd_dd_d(
// IR:         scf.while
// IR:           scf.condition

func.func @infinite(%x: f64, %y: f64) -> f64 {
  cf.br ^bb1(%x : f64)
^bb1(%r: f64):
  %c1 = arith.constant 1.0 : f64
  %sum = arith.addf %r, %c1 : f64
  %c = arith.cmpf ult, %x, %y : f64
  cf.cond_br %c, ^bb1(%r : f64), ^bb2
^bb2:
  func.return %sum : f64
}

func.func @main() {
  %x = arith.constant 2.0 : f64
  %y = arith.constant 1.0 : f64
  %dx = arith.constant 0.75 : f64
  %dy = arith.constant 4.0 : f64
  %p, %t = ad.fwddiff @infinite(%x, %dx, %y, %dy) {activity = [dup, dup], ret_activity = [dup]} : (f64, f64, f64, f64) -> (f64, f64)
  printf.print_format "sum = {} dsum = {}\n", %p : f64, %t : f64
  func.return
}
