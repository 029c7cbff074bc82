// Enzyme-MLIR ReverseMode/inactive_arg.mlir: scf.if yielding the argument or
// a constant. Enzyme runs --convert-scf-to-cf first and records the taken
// predecessor; adpasses differentiates the scf.if itself (the reverse is an
// scf.if on the same condition, recomputed: no tape).
// Hand derivation: f(x) = x > 0 ? x : 0, df/dx * dr = (x > 0) dr: at
// x = 0.5, dr = 2: 2; at x = -0.5: 0.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// IR-LABEL: func.func @f_grad_a_a(%arg0: f32, %seed: f32) -> f32
// IR-NOT:     ad.tape
// IR-NOT:     memref.alloc
// IR:         func.return
// CHECK: df 2 0

func.func @f(%arg0: f32) -> f32 {
  %cst = arith.constant 0.0 : f32
  %0 = arith.cmpf ogt, %arg0, %cst : f32
  %1 = scf.if %0 -> f32 {
    scf.yield %arg0 : f32
  } else {
    scf.yield %cst : f32
  }
  func.return %1 : f32
}

func.func @main() {
  %p = arith.constant 0.5 : f32
  %m = arith.constant -0.5 : f32
  %dr = arith.constant 2.0 : f32
  %a = ad.autodiff @f(%p, %dr) {activity = [active], ret_activity = [active]} : (f32, f32) -> f32
  %b = ad.autodiff @f(%m, %dr) {activity = [active], ret_activity = [active]} : (f32, f32) -> f32
  printf.print_format "df {} {}\n", %a : f32, %b : f32
  func.return
}
