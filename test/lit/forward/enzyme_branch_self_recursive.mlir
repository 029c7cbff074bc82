// RUN: not ad-opt %s --forward 2>&1 | filecheck %s --check-prefix=ERR
// Enzyme-MLIR ForwardMode/branch-self-recursive.mlir: a block that branches to
// itself (forever when x < y), passing its argument along; the tangent is a
// block argument beside it.
// Hand derivation (run with x >= y, which leaves at once): sum = x + 1,
// dsum = dx; at x = 2, y = 1, dx = 0.75, dy = 4: (3, 0.75).
// adpasses differentiates structured control flow only (scf.for/while/if,
// single-block regions; reverse mode rejects cf.* too): an error at the
// function, naming what to write instead. The hand derivation above is
// the numeric check to restore if unstructured control flow is supported.

// ERR: enzyme_branch_self_recursive.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: {{.*}}several blocks; only structured (scf) code is supported
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
// ERR-NOT: Traceback
