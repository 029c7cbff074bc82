// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/branch.mlir: cf.cond_br passing the active value of
// either branch to a block argument; the tangent travels with it.
// Hand derivation: r = x if x < y else y; dr = dx or dy. With dx = 0.5,
// dy = 0.25: (x, y) = (1, 2): 0.5; (3, 2): 0.25.
// Both edges go to one block with no other predecessor: adpasses lifts the
// branch to an arith.select per block argument (adpasses/transforms/lift_cf.py)
// and differentiates the select.

// IR-LABEL: func.func @square_fwd_
// IR-NOT:     {{[^s]cf\.}}
// IR:         arith.select %c
// IR:         func.return
// CHECK: x<y: 0.5 x>y: 0.25
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
