// RUN: not ad-opt %s --forward 2>&1 | filecheck %s --check-prefix=ERR
// Enzyme-MLIR ForwardMode/executeop.mlir: scf.execute_region whose region has
// several blocks (cf.switch, block arguments, a cf.br), yielding two values.
// Hand derivation, at x = 1.5, dx = 2: c = 104: (x+x, 2), res = 4*x,
// dres = 4*dx = 8; c = 113: (x*x, 10), res = 10*x^2, dres = 20*x*dx = 60;
// default: (x*x, x), res = x^3, dres = 3*x^2*dx = 13.5.
// adpasses differentiates structured control flow only (scf.for/while/if,
// single-block regions; reverse mode rejects cf.* too): an error at the
// function, naming what to write instead. The hand derivation above is
// the numeric check to restore if unstructured control flow is supported.

func.func @square(%x: f64, %c: i32) -> f64 {
  %c2 = arith.constant 2.0 : f64
  %c10 = arith.constant 10.0 : f64
// ERR: enzyme_executeop.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: {{.*}}several blocks; only structured (scf) code is supported
  %r:2 = scf.execute_region -> (f64, f64) {
    cf.switch %c : i32, [
      default: ^bb5,
      104: ^bb3,
      113: ^bb4(%c10 : f64)
    ]
  ^bb4(%z: f64):
    %x2 = arith.mulf %x, %x : f64
    scf.yield %x2, %z : f64, f64
  ^bb3:
    %x3 = arith.addf %x, %x : f64
    scf.yield %x3, %c2 : f64, f64
  ^bb5:
    cf.br ^bb4(%x : f64)
  }
  %res = arith.mulf %r#0, %r#1 : f64
  func.return %res : f64
}

func.func @main() {
  %x = arith.constant 1.5 : f64
  %dx = arith.constant 2.0 : f64
  %k104 = arith.constant 104 : i32
  %k113 = arith.constant 113 : i32
  %k7 = arith.constant 7 : i32
  %a = ad.fwddiff @square(%x, %dx, %k104) {activity = [dup, const], ret_activity = [dupnoneed]} : (f64, f64, i32) -> f64
  %b = ad.fwddiff @square(%x, %dx, %k113) {activity = [dup, const], ret_activity = [dupnoneed]} : (f64, f64, i32) -> f64
  %d = ad.fwddiff @square(%x, %dx, %k7) {activity = [dup, const], ret_activity = [dupnoneed]} : (f64, f64, i32) -> f64
  printf.print_format "104: {} 113: {} default: {}\n", %a : f64, %b : f64, %d : f64
  func.return
}
// ERR-NOT: Traceback
