// A checkpointed call reruns on copies of the arrays it snapshots: two
// operands that may share memory (arguments without noalias) would be
// rerun on separate copies, so that is an error at the call, never a
// silently wrong gradient. With noalias arguments the same module
// differentiates.
// RUN: not ad-opt %s --reverse 2>&1 | filecheck %s --check-prefix=ERROR
// RUN: sed -e 's/%a: memref<?xf64>, %b: memref<?xf64>) -> f64/%a: memref<?xf64> {ad.noalias}, %b: memref<?xf64> {ad.noalias}) -> f64/' %s | ad-opt --reverse | filecheck %s --check-prefix=NOALIAS

// ERROR: checkpoint_overlap.mlir:21:3: error: 'func.call': is a checkpointed call whose arrays %a ({{.*}}checkpoint_overlap.mlir:19) and %b ({{.*}}checkpoint_overlap.mlir:19) may share memory; its recomputation copies %a and
// NOALIAS: func.call @g_grad_dd_(%a, %da, %b_at_call, %db)

func.func @g(%a: memref<?xf64>, %b: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<?xf64>
  %y = arith.mulf %x, %x : f64
  memref.store %y, %b[%c0] : memref<?xf64>
  func.return
}
func.func @f(%a: memref<?xf64>, %b: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  func.call @g(%a, %b) {ad.checkpoint} : (memref<?xf64>, memref<?xf64>) -> ()
  %r = memref.load %b[%c0] : memref<?xf64>
  func.return %r : f64
}
func.func @main(%a: memref<?xf64>, %da: memref<?xf64>, %b: memref<?xf64>, %db: memref<?xf64>, %s: f64) {
  ad.autodiff @f(%a, %da, %b, %db, %s) {activity = [dup, dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, f64) -> ()
  func.return
}
