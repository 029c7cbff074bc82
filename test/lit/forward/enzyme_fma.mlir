// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/fma.mlir: the tangent of math.fma, all three
// operands active.
// Hand derivation: d fma(x, y, z) = dx*y + x*dy + dz; at (x, y, z) = (2, 3, 5),
// (dx, dy, dz) = (0.5, 0.25, 0.125): 1.5 + 0.5 + 0.125 = 2.125.

// IR-LABEL: func.func @fma_fwd_ddd_n(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64, %[[Y:[a-z0-9_]+]]: f64, %[[DY:[a-z0-9_]+]]: f64, %[[Z:[a-z0-9_]+]]: f64, %[[DZ:[a-z0-9_]+]]: f64) -> f64
// IR-NEXT:    %[[A:.*]] = arith.mulf %[[DX]], %[[Y]] : f64
// IR-NEXT:    %[[B:.*]] = arith.mulf %[[DY]], %[[X]] : f64
// IR-NEXT:    %[[S:.*]] = arith.addf %[[A]], %[[B]] : f64
// IR-NEXT:    %[[R:.*]] = arith.addf %[[S]], %[[DZ]] : f64
// IR-NEXT:    func.return %[[R]] : f64

func.func @fma(%x: f64, %y: f64, %z: f64) -> f64 {
  %r = math.fma %x, %y, %z : f64
  func.return %r : f64
}

func.func @main() {
  %x = arith.constant 2.0 : f64
  %y = arith.constant 3.0 : f64
  %z = arith.constant 5.0 : f64
  %dx = arith.constant 0.5 : f64
  %dy = arith.constant 0.25 : f64
  %dz = arith.constant 0.125 : f64
  %d = ad.fwddiff @fma(%x, %dx, %y, %dy, %z, %dz) {activity = [dup, dup, dup], ret_activity = [dupnoneed]} : (f64, f64, f64, f64, f64, f64) -> f64
  // CHECK: d = 2.125
  printf.print_format "d = {}\n", %d : f64
  func.return
}
