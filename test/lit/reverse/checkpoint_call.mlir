// RUN: ad-opt %s -p 'ad-reverse{lower-tapes=false loop-local=false}' | filecheck %s
// RUN: ad-opt %s --reverse --no-loop-local --print-cache-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// A call marked ad.checkpoint is recomputed in the reverse sweep instead of
// taped: the forward sweep of @f runs @step's primal (the call stays, nothing
// of @step's internals is taped in @f), and pushes a snapshot of %u before
// each call (the call overwrites %u). The reverse sweep restores each
// snapshot into a scratch buffer and calls @step's own gradient on it, which
// reruns @step forward taping its own values (%a, sin) and reverses it. The
// adjoint of the scalar input %dt comes back as the callee gradient's result.

// CHECK-LABEL: func.func @step_grad_da_(%u: memref<?xf64>, %du: memref<?xf64>, %dt: f64) -> f64
// CHECK:         %tape_a = ad.tape.create
// CHECK:         %tape_c = ad.tape.create
// CHECK:         scf.for
// CHECK:           math.sin
// CHECK:           ad.tape.push %c, %tape_c
// CHECK:         ad.tape.pop %tape_c
// CHECK:         math.cos

// CHECK-LABEL: func.func @f_grad_dac_a(
// CHECK:         %snapshot_u = ad.tape.create
// CHECK-NOT:     math.sin
// CHECK:         scf.for %t =
// CHECK-NEXT:      scf.for
// CHECK-NEXT:        memref.load %u
// CHECK-NEXT:        ad.tape.push %{{.*}}, %snapshot_u
// CHECK:           func.call @step(%u, %dt) {ad.checkpoint}
// CHECK:         scf.for {{.*}} iter_args
// CHECK:           %u_at_call = memref.alloc(%{{.*}}) {ad.workspace}
// CHECK:           scf.for
// CHECK:             ad.tape.pop %snapshot_u
// CHECK:             memref.store %{{.*}}, %u_at_call
// CHECK:           func.call @step_grad_da_(%u_at_call, %du, %dt)
// CHECK:           memref.dealloc %u_at_call {ad.workspace}
// CHECK:         ad.tape.free %snapshot_u

// REPORT-LABEL: cache report for @f_grad_dac_a
// REPORT:       snapshot  %u {{.*}}f64 x steps * size(u) {{.*}}memory of func.call @step: overwritten: call @step {{.*}}(while it runs): writes every element of %u
// REPORT:       taped bytes: 8*steps*(size(u))
// REPORT-LABEL: cache report for @step_grad_da_
// REPORT:       taped bytes: 8*(dim(u, 0)) + 8*(dim(u, 0))

func.func @step(%u: memref<?xf64>, %dt: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %u, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %u[%i] : memref<?xf64>
    %b = arith.mulf %a, %a : f64
    %c = math.sin %b : f64
    %d = arith.mulf %c, %dt : f64
    %e = arith.addf %a, %d : f64
    memref.store %e, %u[%i] : memref<?xf64>
  }
  func.return
}
func.func @f(%u: memref<?xf64>, %dt: f64, %steps: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %t = %c0 to %steps step %c1 {
    func.call @step(%u, %dt) {ad.checkpoint} : (memref<?xf64>, f64) -> ()
  }
  %s = memref.load %u[%c0] : memref<?xf64>
  func.return %s : f64
}
func.func @main(%u: memref<?xf64>, %du: memref<?xf64>, %dt: f64, %steps: index, %seed: f64) -> f64 {
  %ddt = ad.autodiff @f(%u, %du, %dt, %steps, %seed) {activity = [dup, active, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64, index, f64) -> f64
  func.return %ddt : f64
}
