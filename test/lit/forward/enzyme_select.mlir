// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/select.mlir: relu by arith.select; the tangent is the
// same choice between the operands' tangents, a constant contributing 0.
// Hand derivation: x > 0: dx; else 0. dx = 0.5: relu(2) -> 0.5, relu(-2) -> 0.

// IR-LABEL: func.func @relu_fwd_d_n(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64) -> f64
// IR:         %[[C:.*]] = arith.cmpf ugt, %[[X]], %[[Z:.*]] : f64
// IR-NEXT:    %[[T:.*]] = arith.select %[[C]], %[[DX]], %[[Z]] : f64
// IR-NEXT:    func.return %[[T]] : f64

func.func @relu(%x: f64) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c = arith.cmpf ugt, %x, %zero : f64
  %r = arith.select %c, %x, %zero : f64
  func.return %r : f64
}

func.func @main() {
  %p = arith.constant 2.0 : f64
  %n = arith.constant -2.0 : f64
  %dx = arith.constant 0.5 : f64
  %a = ad.fwddiff @relu(%p, %dx) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  %b = ad.fwddiff @relu(%n, %dx) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK: relu(2) 0.5 relu(-2) 0
  printf.print_format "relu(2) {} relu(-2) {}\n", %a : f64, %b : f64
  func.return
}
