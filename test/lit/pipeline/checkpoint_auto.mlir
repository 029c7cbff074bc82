// RUN: ad-opt %s -p 'ad-clone-primals,ad-checkpoint-loops{tape-limit=1000}' | filecheck %s
// RUN: ad-opt %s --reverse --tape-limit=1000 --print-cache-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: ad-run %s | filecheck %s --check-prefix=OUT
// RUN: ad-opt %s --reverse --tape-limit=100000 | ad-run | filecheck %s --check-prefix=OUT
// RUN: ad-opt %s --reverse --tape-limit=1500 | ad-run | filecheck %s --check-prefix=OUT
// RUN: ad-opt %s --reverse --tape-limit=600 | ad-run | filecheck %s --check-prefix=OUT
// RUN: ad-opt %s --reverse --tape-limit=330 | ad-run | filecheck %s --check-prefix=OUT
// RUN: ad-opt %s --reverse --tape-limit=300 | not ad-run 2>&1 | filecheck %s --check-prefix=SMALL
// A byte limit alone (no schedule): ad-checkpoint-loops emits both
// schedules over one outlined body and chooses when the gradient runs:
// with T one step's tape (128 bytes here, from the trial cache plan), S
// the state (%u, 8 * 8 bytes, and the carried %s, 8), k the segment length
// and count = ceildiv(N, k): no checkpointing when N*T fits; sqrt segments
// when count*S + k*T fits; else revolve with (limit - 2T) / S snapshots;
// else (limit < S + 2T) a MemoryError naming S + 2T. With N = 30: the
// whole tape is 3840 bytes, sqrt segments (k = 5, 6 segments) hold 1072,
// revolve needs at least 328. The limits 100000 (no checkpointing), 1500
// (sqrt), 600 (revolve, 4 snapshots) and 330 (revolve, 1 snapshot) give
// the gradient of the run without checkpointing (OUT); 300 stops (SMALL).
// test/test_checkpoint_auto.py checks the choice in the bound report.

// CHECK-LABEL: func.func private @f_segment_0(%snapshots: index, %lo: index, %hi: index, %{{.*}}: index, %n: index, %u: memref<?xf64> {ad.noalias}, %dt: f64, %s: f64) -> f64
// CHECK-LABEL: func.func @f_grad_dac_a(
// CHECK:         %segment_length = arith.maxsi
// CHECK:         %sqrt_peak = arith.select
// CHECK:         %[[LIMIT:.*]] = arith.constant 1000 : index
// CHECK:         %[[WHOLE:.*]] = arith.cmpi ugt, %{{.*}}, %[[LIMIT]] : index
// CHECK-NEXT:    %[[SQRT:.*]] = arith.cmpi ugt, %sqrt_peak, %[[LIMIT]] : index
// CHECK-NEXT:    %use_revolve = arith.andi %[[WHOLE]], %[[SQRT]] : i1
// CHECK:         %least_budget = arith.select
// CHECK:         %snapshots = arith.divui
// CHECK:         %[[BELOW:.*]] = arith.cmpi ugt, %least_budget, %[[LIMIT]] : index
// CHECK-NEXT:    %[[STOP:.*]] = arith.andi %use_revolve, %[[BELOW]] : i1
// CHECK-NEXT:    ad.raise_if %[[STOP]], %least_budget, %sqrt_peak {exception = "MemoryError", {{.*}}ad.checkpoint_budget = 1000 : i64}
// CHECK:         %segments = arith.select %use_revolve, %{{.*}}, %{{.*}} : index
// CHECK:         %snapshots_1 = arith.maxui %snapshots, %{{.*}} : index
// CHECK:         %[[SEG:.*]] = scf.for %segment = %{{.*}} to %segments {{.*}} iter_args(%[[S:.*]] = %z) -> (f64)
// CHECK:           func.call @f_segment_0(%snapshots_1, {{.*}}, %n, %u, %dt, %[[S]]) {ad.checkpoint}
// CHECK:         %after_segments = arith.addi
// CHECK:         arith.select %use_revolve
// CHECK:         %revolve_end = arith.addi %after_segments,
// CHECK:         %[[R:.*]] = func.call @f_segment_0(%snapshots_1, %after_segments, %revolve_end, %c1, %n, %u, %dt, %[[SEG]]) {ad.checkpoint, ad.revolve = {state = array<i64: 5>, scratch = array<i64>, carried = 1 : i64, limit = 1000 : i64}}
// CHECK:         %acc = scf.for %t = %revolve_end to %steps step %c1 iter_args(%s{{(_[0-9]+)?}} = %[[R]]) -> (f64)

// REPORT-LABEL: cache report for @f_grad_dac_a
// REPORT:       schedule of the loop at {{.*}}checkpoint_auto.mlir:{{[0-9]+}}:{{[0-9]+}} under a limit of 1000 bytes: chosen when the gradient runs, from the trip count, the state's and one step's bytes (no checkpointing, sqrt segments or revolve, whichever fits; a MemoryError when none does)

// OUT: 1.4657 0.21332
// OUT-NEXT: done
// SMALL: error: MemoryError: a memory limit (memory_limit, tape_limit, --tape-limit) of 300 bytes is too small for this time loop: checkpointing it needs at least 328 bytes (one snapshot of the loop's state and two steps' tapes, by the binomial schedule; sqrt segments would hold 1072 bytes); give a limit of at least 328 bytes

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
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %steps = arith.constant 30 : index
  %dt = arith.constant 0.05 : f64
  %seed = arith.constant 1.0 : f64
  %zero = arith.constant 0.0 : f64
  %u = memref.alloc(%c8) : memref<?xf64>
  %du = memref.alloc(%c8) : memref<?xf64>
  scf.for %i = %c0 to %c8 step %c1 {
    %k = arith.index_cast %i : index to i64
    %x = arith.sitofp %k : i64 to f64
    %tenth = arith.constant 0.07 : f64
    %y = arith.mulf %x, %tenth : f64
    memref.store %y, %u[%i] : memref<?xf64>
    memref.store %zero, %du[%i] : memref<?xf64>
  }
  %ddt = ad.autodiff @f(%u, %du, %dt, %steps, %seed) {activity = [dup, active, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64, index, f64) -> f64
  %d1 = memref.load %du[%c1] : memref<?xf64>
  printf.print_format "{} {}\n", %d1 : f64, %ddt : f64
  printf.print_format "done\n"
  func.return
}
