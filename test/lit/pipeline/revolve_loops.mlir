// RUN: ad-opt %s -p 'ad-clone-primals,ad-checkpoint-loops{schedule=revolve snapshots=4}' | filecheck %s
// RUN: ad-opt %s -p 'ad-clone-primals,ad-checkpoint-loops{tape-limit=5000 schedule=revolve}' | filecheck %s --check-prefix=BUDGET
// RUN: ad-opt %s -p 'ad-reverse{checkpoint-schedule=revolve snapshots=4 lower-tapes=false}' | filecheck %s --check-prefix=GRAD
// RUN: ad-opt %s --reverse --snapshots=4 | filecheck %s --check-prefix=CLI
// RUN: not ad-opt %s -p 'ad-checkpoint-loops{schedule=binomial}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not ad-opt %s --reverse --snapshots=-2 2>&1 | filecheck %s --check-prefix=NEG
// RUN: not ad-opt %s -p 'ad-reverse{checkpoint-schedule=revolve snapshots=-2}' 2>&1 | filecheck %s --check-prefix=NEG
// RUN: not ad-opt %s --reverse --snapshots=0 2>&1 | filecheck %s --check-prefix=NOBUDGET
// RUN: not ad-opt %s -p 'ad-reverse{checkpoint-schedule=revolve}' 2>&1 | filecheck %s --check-prefix=NOBUDGET
// The time loop of @f (in-place %u, carried %s), reversed by the binomial
// (revolve) schedule with 4 snapshots (adpasses/cache/revolve.py). The
// loop's first N - 1 iterations become a call of @f_segment_0 (operands:
// snapshot count, lo, hi, step, used values, carried values) marked
// ad.checkpoint and ad.revolve (state: operand 5, %u, which the steps
// overwrite; carried: 1, %s); the last iteration stays a plain loop.

// CHECK-LABEL: func.func private @f_segment_0(%snapshots: index, %lo: index, %hi: index, %{{.*}}: index, %n: index, %u: memref<?xf64> {ad.noalias}, %dt: f64, %s: f64) -> f64
// CHECK:         %acc = scf.for %t = %lo to %hi step %{{.*}} iter_args(%s_1 = %s) -> (f64)
// CHECK-LABEL: func.func @f_grad_dac_a(
// CHECK:         %trips = arith.maxsi %steps
// CHECK:         %snapshots = arith.constant 4 : index
// CHECK:         %revolve_end = arith.addi
// CHECK:         %[[R:.*]] = func.call @f_segment_0(%snapshots, %c0, %revolve_end, %c1, %n, %u, %dt, %z) {ad.checkpoint, ad.revolve = {state = array<i64: 5>, scratch = array<i64>, carried = 1 : i64}}
// CHECK:         %acc = scf.for %t = %revolve_end to %steps step %c1 iter_args(%s = %[[R]]) -> (f64)

// With a byte budget: as many snapshots as fit beside two steps' tapes,
// (limit - 2T) / S, least = S + 2T (a MemoryError when the steps run and
// least > limit), and no checkpointing when N * T fits.
// BUDGET-LABEL: func.func @f_grad_dac_a(
// BUDGET:         %least_budget = arith.select
// BUDGET:         %[[T2:.*]] = arith.minui %{{.*}}, %{{.*}} : index
// BUDGET-NEXT:    %[[SPARE:.*]] = arith.subi %{{.*}}, %[[T2]] : index
// BUDGET-NEXT:    %[[S:.*]] = arith.constant 1 : index
// BUDGET-NEXT:    %[[PER:.*]] = arith.maxui %{{.*}}, %[[S]] : index
// BUDGET-NEXT:    %snapshots = arith.divui %[[SPARE]], %[[PER]] : index
// BUDGET:         %[[LIMIT:.*]] = arith.constant 5000 : index
// BUDGET-NEXT:    %[[FITS:.*]] = arith.cmpi ule, %{{.*}}, %[[LIMIT]] : index
// BUDGET-NEXT:    %[[STEPS:.*]] = arith.select %[[FITS]]
// BUDGET:         ad.raise_if %{{.*}}, %least_budget {exception = "MemoryError", message = "a memory limit {{.*}} of 5000 bytes is too small for this time loop: checkpointing it needs at least {0} bytes {{.*}}", ad.checkpoint_budget = 5000 : i64}
// BUDGET:         func.call @f_segment_0(%snapshots, {{.*}}) {ad.checkpoint, ad.revolve = {state = array<i64: 5>, scratch = array<i64>, carried = 1 : i64, limit = 5000 : i64}}

// The gradient. Forward sweep: slots = min(snapshots, N) (0 when the call
// runs no step: empty buffers, nothing copied); the buffers;
// slot 0 := the initial state; revolve's first descent (advance by the
// optimal split, snapshot); the call runs from the last snapshot; the last
// iteration is taped.
// GRAD-LABEL: func.func @f_grad_dac_a(
// GRAD:         %slots = arith.select %[[LIVE:.*]], %{{.*}}, %c0 : index
// GRAD:         %revolve_positions = memref.alloc(%slots) {ad.workspace} : memref<?xindex>
// GRAD:         %revolve_u = memref.alloc(%slots, %n) {ad.workspace} : memref<?x?xf64>
// GRAD:         %revolve_carried = memref.alloc(%slots) {ad.workspace} : memref<?xf64>
// GRAD:         scf.if %[[LIVE]] {
// GRAD:           memref.store %{{.*}}, %revolve_u[%c0, %{{.*}}]
// GRAD:         scf.for %slot = %c1 to %slots step %c1 iter_args(%top = %c0,
// GRAD:           scf.while
// GRAD:           %advance = arith.maxui
// GRAD:           func.call @f_segment_0(%snapshots, %top, %{{.*}}, %c1, %n, %u, %dt,
// GRAD:           memref.store %{{.*}}, %revolve_positions[%slot]
// GRAD:           memref.store %{{.*}}, %revolve_u[%slot, %{{.*}}]
// GRAD:         func.call @f_segment_0(%snapshots, {{.*}}, %revolve_{{end|steps}}, {{.*}}) {ad.checkpoint, ad.revolve
// GRAD:         scf.for %t = %revolve_{{end|steps}} to %steps
// GRAD:           ad.tape.push
// Reverse sweep: the last step from its tape, then the schedule.
// GRAD:         ad.tape.pop
// GRAD:         %[[N:.*]] = arith.select %{{.*}}, %n, %c0 : index
// GRAD:         %u_working = memref.alloc(%[[N]]) {ad.workspace} : memref<?xf64>
// GRAD:         scf.while
// GRAD:         ^bb0(%steps_left: index, %slot_1: index, %working_at: index,
// GRAD:           %top_1 = memref.load %revolve_positions[%slot_1]
// GRAD:           arith.cmpi ne, %working_at, %top_1
// GRAD:             memref.load %revolve_u[%slot_1,
// GRAD:             memref.store %{{.*}}, %u_working[
// GRAD:             memref.load %revolve_carried[%slot_1]
// GRAD:           arith.cmpi eq, %{{.*}}, %slots : index
// GRAD:           scf.if
// GRAD:             %[[TARGET:.*]] = arith.subi %steps_left, %c1 : index
// GRAD:             %[[AT:.*]] = func.call @f_segment_0(%snapshots, %top_1, %[[TARGET]], %c1, %n, %u_working, %dt,
// GRAD:             func.call @f_segment_0_grad_cccccdaa_a(%snapshots, %[[TARGET]], %steps_left, %c1, %n, %u_working, %du, %dt, %[[AT]],
// GRAD:           } else {
// GRAD:             %advance_1 = arith.maxui
// GRAD:             func.call @f_segment_0(%snapshots, %top_1, %{{.*}}, %c1, %n, %u_working, %dt,
// GRAD:             memref.store %{{.*}}, %revolve_u[%{{.*}}, %{{.*}}]
// GRAD:         memref.dealloc %u_working
// GRAD:         memref.dealloc %revolve_positions
// GRAD:         memref.dealloc %revolve_u
// GRAD:         memref.dealloc %revolve_carried

// CLI: func.call @f_segment_0_grad_
// CLI: scf.while

// BAD: schedule must be one of auto, sqrt, revolve, got 'binomial'
// NEG: error: ad-checkpoint-loops: snapshots must be >= 1 (the loop's initial state is one), or 0 to fit them in tape-limit; got -2
// NOBUDGET: error: ad-checkpoint-loops: schedule=revolve needs a budget: snapshots=S (states held, S >= 1) or tape-limit=BYTES

func.func @f(%u: memref<?xf64>, %dt: f64, %steps: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %u, %c0 : memref<?xf64>
  %z = arith.constant 0.0 : f64
  %acc = scf.for %t = %c0 to %steps step %c1 iter_args(%s = %z) -> (f64) {
    scf.for %i = %c1 to %n step %c1 {
      %a = memref.load %u[%i] : memref<?xf64>
      %b = arith.mulf %a, %a : f64
      %c = math.sin %b : f64
      %d = arith.mulf %c, %dt : f64
      %e = arith.addf %a, %d : f64
      memref.store %e, %u[%i] : memref<?xf64>
    }
    %v = memref.load %u[%c1] : memref<?xf64>
    %w = arith.mulf %v, %s : f64
    %s2 = arith.addf %w, %v : f64
    scf.yield %s2 : f64
  }
  %r = memref.load %u[%c0] : memref<?xf64>
  %out = arith.addf %r, %acc : f64
  func.return %out : f64
}
func.func @main(%u: memref<?xf64>, %du: memref<?xf64>, %dt: f64, %steps: index, %seed: f64) -> f64 {
  %ddt = ad.autodiff @f(%u, %du, %dt, %steps, %seed) {activity = [dup, active, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64, index, f64) -> f64
  func.return %ddt : f64
}
