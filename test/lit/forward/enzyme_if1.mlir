// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/if1.mlir: scf.if with two results, one active.
// Hand derivation: c true: (x*x, 2), res = 2*x^2, dres = 4*x*dx;
// c false: (x+x, 10), res = 20*x, dres = 20*dx. At x = 1.5, dx = 2:
// true: 12, false: 40.

// scf.if gets one more result, the tangent of the active one; the constant
// result has none.
// IR-LABEL: func.func @square_fwd_dc_n(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64, %[[C:[a-z0-9_]+]]: i1) -> f64
// IR:         %{{.*}}, %[[R1:.*]], %[[DR:.*]] = scf.if %[[C]] -> (f64, f64, f64)
// IR:           scf.yield %{{.*}}, %{{.*}}, %{{.*}} : f64, f64, f64
// IR:         } else {
// IR-NEXT:      %{{.*}} = arith.addf %[[X]], %[[X]] : f64
// IR-NEXT:      %[[DADD:.*]] = arith.addf %[[DX]], %[[DX]] : f64
// IR-NEXT:      scf.yield %{{.*}}, %{{.*}}, %[[DADD]] : f64, f64, f64
// IR:         %[[DRES:.*]] = arith.mulf %[[DR]], %[[R1]] : f64
// IR-NEXT:    func.return %[[DRES]] : f64

func.func @square(%x: f64, %c: i1) -> f64 {
  %c2 = arith.constant 2.0 : f64
  %c10 = arith.constant 10.0 : f64
  %r:2 = scf.if %c -> (f64, f64) {
    %mul = arith.mulf %x, %x : f64
    scf.yield %mul, %c2 : f64, f64
  } else {
    %add = arith.addf %x, %x : f64
    scf.yield %add, %c10 : f64, f64
  }
  %res = arith.mulf %r#0, %r#1 : f64
  func.return %res : f64
}

func.func @main() {
  %x = arith.constant 1.5 : f64
  %dx = arith.constant 2.0 : f64
  %t = arith.constant true
  %f = arith.constant false
  %a = ad.fwddiff @square(%x, %dx, %t) {activity = [dup, const], ret_activity = [dupnoneed]} : (f64, f64, i1) -> f64
  %b = ad.fwddiff @square(%x, %dx, %f) {activity = [dup, const], ret_activity = [dupnoneed]} : (f64, f64, i1) -> f64
  // CHECK: then = 12 else = 40
  printf.print_format "then = {} else = {}\n", %a : f64, %b : f64
  func.return
}
