// RUN: ad-opt %s -p 'ad-clone-primals,ad-checkpoint-loops{tape-limit=1000 schedule=sqrt}' | filecheck %s
// RUN: ad-opt %s -p 'ad-reverse{tape-limit=0 checkpoint-schedule=sqrt lower-tapes=false}' | filecheck %s --check-prefix=GRAD
// RUN: ad-opt %s --reverse --print-cache-report 2>&1 >/dev/null | filecheck %s --check-prefix=PLAIN
// RUN: ad-opt %s --reverse --tape-limit=0 --checkpoint-schedule=sqrt --print-cache-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// The time loop of @f tapes %a and sin per inner iteration: one state per
// step. With a tape limit, ad-checkpoint-loops outlines the loop's body
// into @f_segment_0 (iterations [lo, hi), same step, the carried %s as a
// parameter and result) and runs segments of `segment_length` steps, each a
// checkpointed call: segment_length = trips if trips * T <= limit (T: one
// step's tape, from a trial cache plan), else ceil(sqrt(trips * S / T))
// (S: 8 per carried value + the bytes of %u, which the loop writes). The original loop stays after the segments: it
// runs every iteration when there is one segment (no call), none when
// there are several. The user's @f is unchanged. In the gradient, the
// forward sweep tapes each segment's carried value and snapshots %u before
// it; the reverse sweep reruns each segment through its own gradient.

// CHECK-LABEL: func.func @f(
// CHECK:         scf.for %t =
// CHECK-LABEL: func.func private @f_segment_0(%lo: index, %hi: index, %{{.*}}: index, %n: index, %u: memref<?xf64> {ad.noalias}, %dt: f64, %s: f64) -> f64
// CHECK-NOT:     arith.constant 0.0
// CHECK:         %acc = scf.for %t = %lo to %hi step %{{.*}} iter_args(%s_1 = %s) -> (f64)
// CHECK:           math.sin
// CHECK:         func.return %acc : f64
// CHECK-LABEL: func.func @f_grad_dac_a(
// CHECK:         %trips = arith.maxsi %steps
// CHECK:         math.sqrt
// CHECK:         math.ceil
// CHECK:         %[[LIMIT:.*]] = arith.constant 1000 : index
// CHECK:         %[[FITS:.*]] = arith.cmpi ule, %{{.*}}, %[[LIMIT]]
// CHECK:         arith.select %[[FITS]], %trips
// CHECK:         %segment_length = arith.maxsi
// CHECK:         %segments = arith.select
// CHECK:         %[[SEG:.*]] = scf.for %segment = %{{.*}} to %segments {{.*}} iter_args(%[[S:.*]] = %z) -> (f64)
// CHECK:           arith.minsi %steps
// CHECK:           func.call @f_segment_0({{.*}}, %n, %u, %dt, %[[S]]) {ad.checkpoint}
// CHECK:         %after_segments = arith.addi
// CHECK:         %acc = scf.for %t = %after_segments to %steps {{.*}} iter_args(%s{{(_[0-9]+)?}} = %[[SEG]]) -> (f64)
// CHECK:           math.sin

// GRAD-LABEL: func.func @f_segment_0_grad_ccccdaa_a(
// GRAD:         %tape_c = ad.tape.create
// GRAD:         math.sin
// GRAD-LABEL: func.func @f_grad_dac_a(
// GRAD:         %snapshot_u = ad.tape.create
// GRAD:         scf.for %segment =
// GRAD:           ad.tape.push %{{.*}}, %snapshot_u
// GRAD:           func.call @f_segment_0(
// GRAD:         scf.for
// GRAD:           ad.tape.pop %snapshot_u
// GRAD:           func.call @f_segment_0_grad_ccccdaa_a(

// The report of the checkpointed gradient: the snapshots of %u (one per
// segment), the segment's gradient, the recompute factor.
// REPORT-LABEL: cache report for @f_grad_dac_a
// REPORT:       snapshot  %u {{.*}}f64 x segments * size(u)
// REPORT:       checkpoint @f_segment_0 at {{.*}}: recomputed by @f_segment_0_grad_ccccdaa_a, which tapes {{.*}} bytes per call
// REPORT:       recompute factor: 2 (forward runs of the checkpointed code)

// Without a limit: no segments, one state per step taped.
// PLAIN-LABEL: cache report for @f_grad_dac_a
// PLAIN:       tape      %c      f64 x steps * (dim(u, 0) - 1)

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
