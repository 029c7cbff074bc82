// RUN: not ad-opt %s --forward 2>&1 | filecheck %s --check-prefix=ERR
// Enzyme-MLIR ForwardMode/branch.mlir: cf.cond_br passing the active value of
// either branch to a block argument; the tangent travels with it.
// Hand derivation: r = x if x < y else y; dr = dx or dy. With dx = 0.5,
// dy = 0.25: (x, y) = (1, 2): 0.5; (3, 2): 0.25.
// adpasses differentiates structured control flow only (scf.for/while/if,
// single-block regions; reverse mode rejects cf.* too): an error at the
// function, naming what to write instead. The hand derivation above is
// the numeric check to restore if unstructured control flow is supported.

// ERR: enzyme_branch.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: {{.*}}several blocks; only structured (scf) code is supported
func.func @square(%x: f64, %y: f64) -> f64 {
  %c = arith.cmpf ult, %x, %y : f64
  cf.cond_br %c, ^blk2(%x : f64), ^blk2(%y : f64)
^blk2(%r: f64):
  func.return %r : f64
}

func.func @main() {
  %one = arith.constant 1.0 : f64
  %two = arith.constant 2.0 : f64
  %three = arith.constant 3.0 : f64
  %dx = arith.constant 0.5 : f64
  %dy = arith.constant 0.25 : f64
  %a = ad.fwddiff @square(%one, %dx, %two, %dy) {activity = [dup, dup], ret_activity = [dupnoneed]} : (f64, f64, f64, f64) -> f64
  %b = ad.fwddiff @square(%three, %dx, %two, %dy) {activity = [dup, dup], ret_activity = [dupnoneed]} : (f64, f64, f64, f64) -> f64
  printf.print_format "x<y: {} x>y: {}\n", %a : f64, %b : f64
  func.return
}
// ERR-NOT: Traceback
