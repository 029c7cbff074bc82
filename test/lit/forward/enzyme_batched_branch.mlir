// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/batched_branch.mlir: width 2 through cf.cond_br to a
// block argument: each lane's tangent becomes a block argument of its own.
// Hand derivation: r = x if x < y else y. dx = (0.5, 1.5), dy = (0.25, -0.25):
// (x, y) = (1, 2): (0.5, 1.5); (3, 2): (0.25, -0.25).
// Both edges go to one block with no other predecessor: adpasses lifts the
// branch to an arith.select per block argument (adpasses/transforms/lift_cf.py)
// and differentiates the select.

// IR-LABEL: func.func @square_fwd_
// IR-NOT:     {{[^s]cf\.}}
// IR:         arith.select %c
// IR:         func.return
// CHECK: x<y: 0.5 1.5 x>y: 0.25 -0.25
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
  %dx0 = arith.constant 0.5 : f64
  %dx1 = arith.constant 1.5 : f64
  %dy0 = arith.constant 0.25 : f64
  %dy1 = arith.constant -0.25 : f64
  %a:2 = ad.fwddiff @square(%one, %dx0, %dx1, %two, %dy0, %dy1) {activity = [dup, dup], ret_activity = [dupnoneed], width = 2} : (f64, f64, f64, f64, f64, f64) -> (f64, f64)
  %b:2 = ad.fwddiff @square(%three, %dx0, %dx1, %two, %dy0, %dy1) {activity = [dup, dup], ret_activity = [dupnoneed], width = 2} : (f64, f64, f64, f64, f64, f64) -> (f64, f64)
  printf.print_format "x<y: {} {} x>y: {} {}\n", %a#0 : f64, %a#1 : f64, %b#0 : f64, %b#1 : f64
  func.return
}
