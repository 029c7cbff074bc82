// ad-opt runs ad-reverse as the steps of the reverse pipeline, and
// --emit-after=STEP prints the IR after the first run of a step.
// RUN: ad-opt %s --reverse --emit-after=ad-clone-primals | filecheck %s --check-prefix=CLONE
// RUN: ad-opt %s --reverse --emit-after=ad-count-while | filecheck %s --check-prefix=COUNT
// RUN: ad-opt %s --reverse --emit-after=ad-build-gradients | filecheck %s --check-prefix=BUILD
// RUN: ad-opt %s -p ad-reverse --emit-after=ad-lower-tapes | filecheck %s --check-prefix=TAPES
// RUN: ad-opt %s --reverse --emit-after=ad-drop-gradient-marks | filecheck %s --check-prefix=DROP
// RUN: ad-opt %s --reverse --emit-after=ad-build-gradients --emit=llvm-ir | filecheck %s --check-prefix=LLVM
// RUN: not ad-opt %s --reverse --emit-after=ad-nothing 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not ad-opt %s --reverse --no-simplify --emit-after=ad-simplify 2>&1 | filecheck %s --check-prefix=NOSIMP

// CLONE:       func.func @newton_grad_a_a(%a: f64) -> f64 attributes {ad.gradient_of = {primal = @newton, activity = ["active"], ret_activity = ["active"]}} {
// CLONE-NOT:     ad.counted
// CLONE:         ad.autodiff @newton

// COUNT:       func.func @newton_grad_a_a(%a: f64) -> f64 attributes {ad.gradient_of =
// COUNT:         } attributes {ad.counted}
// COUNT:         ad.autodiff @newton

// BUILD:       func.func @newton_grad_a_a(%a: f64, %seed: f64) -> f64 attributes {ad.gradient_of =
// BUILD:         ad.tape.create : !ad.tape<f64>
// BUILD:         func.call @newton_grad_a_a

// TAPES:       func.func @newton_grad_a_a(
// TAPES:         ad.tape.create : !ad.tape<f64>

// DROP:        func.func @newton_grad_a_a(%a: f64, %seed: f64) -> f64 {
// DROP-NOT:      ad.unchecked

// LLVM:        define double @"u.newton_grad_a_a"(double %"a", double %"seed")

// UNKNOWN: error: --emit-after=ad-nothing: no pass of that name runs (the passes: ad-clone-primals, ad-inline-calls, ad-lower-affine, ad-lower-linalg, ad-expand-upstream-ops, ad-scalar-replace, ad-interchange-columns, ad-count-while, ad-fuse-loops, ad-build-gradients, ad-lower-tapes, ad-dead-forward, ad-simplify, ad-split-sweeps, ad-drop-gradient-marks, ad-elide-shadow-checks)
// NOSIMP: error: --emit-after=ad-simplify: no pass of that name runs (the passes: ad-clone-primals, ad-inline-calls, ad-lower-affine, ad-lower-linalg, ad-expand-upstream-ops, ad-scalar-replace, ad-interchange-columns, ad-count-while, ad-fuse-loops, ad-build-gradients, ad-lower-tapes, ad-dead-forward, ad-split-sweeps, ad-drop-gradient-marks, ad-elide-shadow-checks)
func.func @newton(%a: f64) -> f64 {
  %half = arith.constant 0.5 : f64
  %tol = arith.constant 1.0e-12 : f64
  %r, %e = scf.while (%x = %a, %dx = %a) : (f64, f64) -> (f64, f64) {
    %ad = math.absf %dx : f64
    %c = arith.cmpf ogt, %ad, %tol : f64
    scf.condition(%c) %x, %dx : f64, f64
  } do {
  ^bb0(%x1: f64, %d: f64):
    %q = arith.divf %a, %x1 : f64
    %s = arith.addf %x1, %q : f64
    %xn = arith.mulf %half, %s : f64
    %dd = arith.subf %xn, %x1 : f64
    scf.yield %xn, %dd : f64, f64
  }
  func.return %r : f64
}
func.func @main(%a: f64, %s: f64) -> f64 {
  %g = ad.autodiff @newton(%a, %s) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %g : f64
}
