// Enzyme-MLIR ReverseMode/scf_for_mincut.mlir: where the min-cut puts the
// cache of a loop. f64 here (Enzyme: f32) so that the 6 printed digits of
// ten chained iterations are stable.
// - mainf: x <- cos(x^2) ten times: one value per iteration is taped, the
//   carried x; x^2 is recomputed from it in the reverse sweep (Enzyme's
//   shape; its `enzyme.cache_use_tensor` tensor cache has no counterpart).
// - recompute_if: x <- x (c[k] ? sin x : cos x), c a const i1 array. Enzyme
//   tapes only x and recomputes the scf.if in the reverse sweep; adpasses'
//   cost model prices recomputing a sin or cos (16) above taping an f64 (8
//   bytes), so it tapes the if's result as well and recomputes nothing
//   transcendental but the derivative's own cos/sin; the condition is read
//   again from c (not taped: c is never written). Under the `min-memory`
//   cache policy (free recomputation) the if's result is still taped:
//   adpasses recomputes single ops, not an scf.if (not done yet).
// Hand derivations (each step's factor f'(x_k), multiplied over k):
// - mainf: d x_{k+1} / d x_k = -sin(x_k^2) 2 x_k: at x0 = 0.9: 0.460222;
// - recompute_if: (f(x_k) + x_k f'(x_k)) with f = sin where c[k], else cos;
//   c[k] = (k mod 3 == 0): at x0 = 0.9: 0.00539076.
// (Both agree with central differences of the primal, h = 1e-6.)
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// IR-LABEL: func.func @mainf_grad_a_a(%arg0: f64, %seed: f64) -> f64
// IR:         %[[T:.*]] = memref.alloca() : memref<10xf64>
// IR-NOT:     memref.alloca() : memref<10xf64>
// IR:         scf.for {{.*}} iter_args(%[[X:.*]] = %arg0) -> (f64) {
// IR:           memref.store %[[X]], %[[T]]
// IR:         scf.for
// IR:           %[[XR:.*]] = memref.load %[[T]]
// IR:           %[[SQ:.*]] = arith.mulf %[[XR]], %[[XR]] : f64
// IR:           math.sin %[[SQ]] : f64
// IR-LABEL: func.func @recompute_if_grad_ca_a(
// IR-DAG:     %[[TX:tape_mul_iter]] = memref.alloca() : memref<10xf64>
// IR-DAG:     %[[TF:tape_ifres]] = memref.alloca() : memref<10xf64>
// IR:         scf.for
// IR:         scf.for
// IR:           memref.load %cond[
// IR:           scf.if
// IR:           } else {
// IR:             math.sin
// IR:           math.cos
// CHECK: mainf 0.460222
// CHECK-NEXT: recompute_if 0.00539076

func.func @mainf(%arg0: f64) -> f64 {
  %lb = arith.constant 0 : index
  %ub = arith.constant 10 : index
  %step = arith.constant 1 : index
  %sum = scf.for %iv = %lb to %ub step %step iter_args(%sum_iter = %arg0) -> (f64) {
    %sum_next = arith.mulf %sum_iter, %sum_iter : f64
    %cos_next = math.cos %sum_next : f64
    scf.yield %cos_next : f64
  }
  func.return %sum : f64
}

func.func private @recompute_if(%cond: memref<?xi1>, %x: f64) -> f64 {
  %lb = arith.constant 0 : index
  %ub = arith.constant 10 : index
  %step = arith.constant 1 : index
  %sum = scf.for %iv = %lb to %ub step %step iter_args(%mul_iter = %x) -> (f64) {
    %cond_it = memref.load %cond[%iv] : memref<?xi1>
    %sin = math.sin %mul_iter : f64
    %ifres = scf.if %cond_it -> f64 {
      scf.yield %sin : f64
    } else {
      %cos = math.cos %mul_iter : f64
      scf.yield %cos : f64
    }
    %mul_next = arith.mulf %mul_iter, %ifres : f64
    scf.yield %mul_next : f64
  }
  func.return %sum : f64
}

func.func @main() {
  %x = arith.constant 0.9 : f64
  %one = arith.constant 1.0 : f64
  %a = ad.autodiff @mainf(%x, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "mainf {}\n", %a : f64

  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c10 = arith.constant 10 : index
  %cond = memref.alloc(%c10) : memref<?xi1>
  scf.for %k = %c0 to %c10 step %c1 {
    %r = arith.remui %k, %c3 : index
    %b = arith.cmpi eq, %r, %c0 : index
    memref.store %b, %cond[%k] : memref<?xi1>
  }
  %d = ad.autodiff @recompute_if(%cond, %x, %one) {activity = [const, active], ret_activity = [active]} : (memref<?xi1>, f64, f64) -> f64
  printf.print_format "recompute_if {}\n", %d : f64
  memref.dealloc %cond : memref<?xi1>
  func.return
}
