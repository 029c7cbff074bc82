// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/batched_if.mlir: width 2 through scf.if with two
// results (as if1.mlir).
// Hand derivation: c true: dres = 4*x*dx; c false: dres = 20*dx; at x = 1.5,
// dx = (2, -1): true (12, -6), false (40, -20).

// IR-LABEL: func.func @square_fwd_dc_n_w2(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[D0:[a-z0-9_]+]]: f64, %[[D1:[a-z0-9_]+]]: f64, %{{.*}}: i1) -> (f64, f64)
// IR:         scf.if %{{.*}} -> (f64, f64, f64, f64)

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
  %d0 = arith.constant 2.0 : f64
  %d1 = arith.constant -1.0 : f64
  %t = arith.constant true
  %f = arith.constant false
  %a:2 = ad.fwddiff @square(%x, %d0, %d1, %t) {activity = [dup, const], ret_activity = [dupnoneed], width = 2} : (f64, f64, f64, i1) -> (f64, f64)
  %b:2 = ad.fwddiff @square(%x, %d0, %d1, %f) {activity = [dup, const], ret_activity = [dupnoneed], width = 2} : (f64, f64, f64, i1) -> (f64, f64)
  // CHECK: then = 12 -6 else = 40 -20
  printf.print_format "then = {} {} else = {} {}\n", %a#0 : f64, %a#1 : f64, %b#0 : f64, %b#1 : f64
  func.return
}
