// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/multiout.mlir: a function with two results, both
// dupnoneed (tangents only) or both dup (each primal followed by its tangent).
// Hand derivation: (y0, y1) = (x*x, x), (dy0, dy1) = (2*x*dx, dx); at x = 3,
// dx = 0.5: dupnoneed (3, 0.5); dup (9, 3, 3, 0.5).

// Results in order: per result its primal (dup), then its tangent.
// IR-LABEL: func.func @square_fwd_d_dd(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64) -> (f64, f64, f64, f64)
// IR:         func.return %[[Y:.*]], %[[DY:.*]], %[[X]], %[[DX]] : f64, f64, f64, f64
// IR-LABEL: func.func @square_fwd_d_nn(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64) -> (f64, f64)
// IR:         func.return %{{.*}}, %[[DX]] : f64, f64

func.func @square(%x: f64) -> (f64, f64) {
  %y = arith.mulf %x, %x : f64
  func.return %y, %x : f64, f64
}

func.func @main() {
  %x = arith.constant 3.0 : f64
  %dx = arith.constant 0.5 : f64
  %r:2 = ad.fwddiff @square(%x, %dx) {activity = [dup], ret_activity = [dupnoneed, dupnoneed]} : (f64, f64) -> (f64, f64)
  // CHECK: dupnoneed: 3 0.5
  printf.print_format "dupnoneed: {} {}\n", %r#0 : f64, %r#1 : f64
  %s:4 = ad.fwddiff @square(%x, %dx) {activity = [dup], ret_activity = [dup, dup]} : (f64, f64) -> (f64, f64, f64, f64)
  // CHECK-NEXT: dup: 9 3 3 0.5
  printf.print_format "dup: {} {} {} {}\n", %s#0 : f64, %s#1 : f64, %s#2 : f64, %s#3 : f64
  func.return
}
