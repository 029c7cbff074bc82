// Enzyme-MLIR ReverseMode/scf_while.mlir: scf.while carrying an index and a
// float squared each iteration. Enzyme's loop continues while `i == 10`, so
// from i = 0 it runs no iteration: f(x) = x, df/dx = 1 (kept here as
// written), and the same loop with `i != 3` runs three times:
// g(x) = x^8, dg/dx = 8 x^7; at x = 1.1: g = 2.14358881, dg = 15.5897368.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// The while loop counts its iterations (ad.counted); the reverse is an
// scf.for over that count reading the taped squares back.
// IR-LABEL: func.func @squares_grad_a_a_p(
// IR:         ad.tape.push %arg2
// IR:         ad.counted
// IR:         scf.for

func.func @zero_trips(%init1: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %res:2 = scf.while (%iter = %c0, %arg1 = %init1) : (index, f32) -> (index, f32) {
    %condition = arith.cmpi eq, %iter, %c10 : index
    scf.condition(%condition) %iter, %arg1 : index, f32
  } do {
  ^bb0(%iterAfter: index, %arg2: f32):
    %next = arith.mulf %arg2, %arg2 : f32
    %nextIter = arith.addi %iterAfter, %c1 : index
    scf.yield %nextIter, %next : index, f32
  }
  func.return %res#1 : f32
}

func.func @squares(%init1: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %res:2 = scf.while (%iter = %c0, %arg1 = %init1) : (index, f32) -> (index, f32) {
    %condition = arith.cmpi ne, %iter, %c3 : index
    scf.condition(%condition) %iter, %arg1 : index, f32
  } do {
  ^bb0(%iterAfter: index, %arg2: f32):
    %next = arith.mulf %arg2, %arg2 : f32
    %nextIter = arith.addi %iterAfter, %c1 : index
    scf.yield %nextIter, %next : index, f32
  }
  func.return %res#1 : f32
}

func.func @main() {
  %x = arith.constant 1.1 : f32
  %one = arith.constant 1.0 : f32
  %a = ad.autodiff @zero_trips(%x, %one) {activity = [active], ret_activity = [active]} : (f32, f32) -> f32
  // CHECK: zero_trips 1
  printf.print_format "zero_trips {}\n", %a : f32
  %g, %dg = ad.autodiff @squares(%x, %one) {activity = [active], ret_activity = [active], with_primal} : (f32, f32) -> (f32, f32)
  // CHECK-NEXT: squares 2.14359 15.5897
  printf.print_format "squares {} {}\n", %g : f32, %dg : f32
  func.return
}
