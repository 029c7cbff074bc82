// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/while.mlir: scf.while carrying an index counter and
// a float sum; the tangent is carried beside the sum.
// Hand derivation: r = 10 + 10*x, dr = 10*dx; at x = 2, dx = 0.25: (30, 2.5).

// The tangent is carried through both regions of the scf.while beside the
// sum (condition, yield); the counter has none.
// IR-LABEL: func.func @while_fwd_d_d(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64) -> (f64, f64)
// IR:         %{{.*}}, %[[S:.*]], %[[DS:.*]] = scf.while (%[[I:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) : (index, f64, f64) -> (index, f64, f64)
// IR:           scf.condition(%{{.*}}) %{{.*}}, %{{.*}}, %{{.*}} : index, f64, f64
// IR:         ^{{.*}}(%{{.*}}: index, %{{.*}}: f64, %[[DS2:.*]]: f64):
// IR:           %[[DS3:.*]] = arith.addf %[[DS2]], %[[DX]] : f64
// IR:           scf.yield %{{.*}}, %{{.*}}, %[[DS3]] : index, f64, f64
// IR:         func.return %[[S]], %[[DS]] : f64, f64

func.func @while(%x: f64) -> f64 {
  %cst = arith.constant 10.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %r:2 = scf.while (%i = %c0, %s = %cst) : (index, f64) -> (index, f64) {
    %go = arith.cmpi slt, %i, %c10 : index
    scf.condition(%go) %i, %s : index, f64
  } do {
  ^bb0(%i2: index, %s2: f64):
    %i3 = arith.addi %i2, %c1 : index
    %s3 = arith.addf %s2, %x : f64
    scf.yield %i3, %s3 : index, f64
  }
  func.return %r#1 : f64
}

func.func @main() {
  %x = arith.constant 2.0 : f64
  %dx = arith.constant 0.25 : f64
  %p, %t = ad.fwddiff @while(%x, %dx) {activity = [dup], ret_activity = [dup]} : (f64, f64) -> (f64, f64)
  // CHECK: r = 30 dr = 2.5
  printf.print_format "r = {} dr = {}\n", %p : f64, %t : f64
  func.return
}
