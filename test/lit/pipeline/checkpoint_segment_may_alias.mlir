// RUN: not ad-opt %s --reverse --snapshots=2 2>&1 | filecheck %s --check-prefix=ERR
// The time loop passes two arguments that may alias (no noalias attribute)
// to the checkpointed @mix: the call is refused (its rerun would copy them
// separately), with or without loop checkpointing; the segments outlined
// from such a loop keep their parameters without noalias
// (checkpoint_segment_noalias.mlir: distinct allocations).

// ERR: error: 'func.call': is a checkpointed call whose arrays %u ({{.*}}) and %v ({{.*}}) may share memory

func.func private @mix(%u: memref<?xf64>, %v: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %u, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %u[%i] : memref<?xf64>
    %b = memref.load %v[%i] : memref<?xf64>
    %s = math.sin %b : f64
    %c = arith.addf %a, %s : f64
    memref.store %c, %u[%i] : memref<?xf64>
    memref.store %a, %v[%i] : memref<?xf64>
  }
  func.return
}
func.func @args(%u: memref<?xf64>, %v: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  scf.for %t = %c0 to %c9 step %c1 {
    func.call @mix(%u, %v) {ad.checkpoint} : (memref<?xf64>, memref<?xf64>) -> ()
  }
  %r = memref.load %u[%c1] : memref<?xf64>
  func.return %r : f64
}
func.func @main(%u: memref<?xf64>, %du: memref<?xf64>, %v: memref<?xf64>, %dv: memref<?xf64>, %seed: f64) {
  ad.autodiff @args(%u, %du, %v, %dv, %seed) {activity = [dup, dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, f64) -> ()
  func.return
}
