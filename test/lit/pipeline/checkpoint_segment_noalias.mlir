// RUN: ad-opt %s -p 'ad-clone-primals,ad-checkpoint-loops{schedule=revolve snapshots=2}' | filecheck %s
// RUN: ad-opt %s -p 'ad-clone-primals,ad-checkpoint-loops{tape-limit=0 schedule=sqrt}' | filecheck %s --check-prefix=SQRT
// RUN: ad-opt %s --reverse --snapshots=2 | filecheck %s --check-prefix=GRAD
// A time loop calls the checkpointed @step with two arrays. Outlining the
// loop's body into a segment function must keep what the caller knows
// about them: in @local they are two distinct allocations, so each segment
// parameter is ad.noalias and the checkpointed call inside the segment
// takes them (it reruns on copies of arrays that do not share memory).
// Arguments that may alias stay without noalias, and the checkpointed call
// is refused (checkpoint_segment_may_alias.mlir).

// CHECK-LABEL: func.func private @local_segment_0(%snapshots: index, %lo: index, %hi: index, %{{.*}}: index, %u: memref<?xf64> {ad.noalias}, %tmp: memref<?xf64> {ad.noalias})
// CHECK:         func.call @step(%u, %tmp) {ad.checkpoint}

// SQRT-LABEL: func.func private @local_segment_0(%lo: index, %hi: index, %{{.*}}: index, %u: memref<?xf64> {ad.noalias}, %tmp: memref<?xf64> {ad.noalias})

// GRAD-LABEL: func.func @local_grad_a_a(
// GRAD:         scf.while
// GRAD:           func.call @local_segment_0_grad_

func.func private @step(%u: memref<?xf64>, %tmp: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %u, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %u[%i] : memref<?xf64>
    %s = math.sin %a : f64
    memref.store %s, %tmp[%i] : memref<?xf64>
  }
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %u[%i] : memref<?xf64>
    %b = memref.load %tmp[%i] : memref<?xf64>
    %c = arith.addf %a, %b : f64
    memref.store %c, %u[%i] : memref<?xf64>
  }
  func.return
}
func.func @local(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c9 = arith.constant 9 : index
  %u = memref.alloc(%c4) : memref<?xf64>
  %tmp = memref.alloc(%c4) : memref<?xf64>
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %x, %u[%i] : memref<?xf64>
  }
  scf.for %t = %c0 to %c9 step %c1 {
    func.call @step(%u, %tmp) {ad.checkpoint} : (memref<?xf64>, memref<?xf64>) -> ()
  }
  %r = memref.load %u[%c1] : memref<?xf64>
  memref.dealloc %u : memref<?xf64>
  memref.dealloc %tmp : memref<?xf64>
  func.return %r : f64
}
func.func @main(%x: f64, %seed: f64) -> f64 {
  %d = ad.autodiff @local(%x, %seed) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %d : f64
}
