// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/batched_for.mlir: width 2 through an scf.for whose
// iter_arg is active: one tangent iter_arg per lane.
// Hand derivation: r = 10 + 10*x, dr = 10*dx per lane; dx = (0.5, 0.2): (5, 2).

// IR-LABEL: func.func @square_fwd_d_n_w2(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[D0:[a-z0-9_]+]]: f64, %[[D1:[a-z0-9_]+]]: f64) -> (f64, f64)
// IR:         scf.for {{.*}} -> (f64, f64, f64)
// IR:           arith.addf %{{.*}}, %[[D0]] : f64
// IR:           arith.addf %{{.*}}, %[[D1]] : f64

func.func @square(%x: f64) -> f64 {
  %cst = arith.constant 10.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %r = scf.for %i = %c0 to %c10 step %c1 iter_args(%acc = %cst) -> (f64) {
    %n = arith.addf %acc, %x : f64
    scf.yield %n : f64
  }
  func.return %r : f64
}

func.func @main() {
  %x = arith.constant 0.3 : f64
  %d0 = arith.constant 0.5 : f64
  %d1 = arith.constant 0.2 : f64
  %t:2 = ad.fwddiff @square(%x, %d0, %d1) {activity = [dup], ret_activity = [dupnoneed], width = 2} : (f64, f64, f64) -> (f64, f64)
  // CHECK: lanes = 5 2
  printf.print_format "lanes = {} {}\n", %t#0 : f64, %t#1 : f64
  func.return
}
