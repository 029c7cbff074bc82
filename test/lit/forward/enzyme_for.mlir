// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/for.mlir: a loop-carried sum started at a constant.
// Hand derivation: r = 10 + 10*x (x added 10 times), dr = 10*dx; at x = 0.3,
// dx = 0.7: r = 13, dr = 7.

// The tangent is an iter_arg of the same loop, starting at 0 (the initial
// value is a constant); no tape.
// IR-LABEL: func.func @square_fwd_d_n(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64) -> f64
// IR-NOT:     ad.tape
// IR:         %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// IR:         %{{.*}}, %[[DR:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[DACC:.*]] = %[[Z]]) -> (f64, f64)
// IR-NEXT:      arith.addf %[[ACC]], %[[X]] : f64
// IR-NEXT:      %[[DN:.*]] = arith.addf %[[DACC]], %[[DX]] : f64
// IR-NEXT:      scf.yield %{{.*}}, %[[DN]] : f64, f64
// IR:         func.return %[[DR]] : f64

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
  %dx = arith.constant 0.7 : f64
  %d = ad.fwddiff @square(%x, %dx) {activity = [dup], ret_activity = [dupnoneed]} : (f64, f64) -> f64
  // CHECK: d = 7
  printf.print_format "d = {}\n", %d : f64
  %p, %t = ad.fwddiff @square(%x, %dx) {activity = [dup], ret_activity = [dup]} : (f64, f64) -> (f64, f64)
  // CHECK-NEXT: r = 13 dr = 7
  printf.print_format "r = {} dr = {}\n", %p : f64, %t : f64
  func.return
}
