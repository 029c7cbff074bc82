// RUN: ad-opt %s -p 'ad-zero-shadows{parallel=false}' | filecheck %s
// ad-zero-shadows for a gradient that runs no parallel loop (what grad
// compiles for a serial function with a loop): the fills are serial loops,
// not marked ad.parallel, which the entry runs with the GIL released (the
// caller's np.zeros ran with it held: docs/parallel.md, "Python threads
// calling one compiled gradient").

// The taped energy gradient begins with its tape's workspace allocation:
// the fill is a loop of its own before it, unmarked, run only below
// 32 MiB (4194304 doubles; core.parallel.SERIAL_ZERO_FILL_BYTES: grad
// passes np.zeros from there on, whose calloc clears nothing).
// CHECK-LABEL: func.func @energy_grad
// CHECK:         %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %[[N:.*]] = memref.dim %x, %{{.*}} : memref<?xf64>
// CHECK-NEXT:    %[[L:.*]] = arith.constant 4194304 : index
// CHECK-NEXT:    %[[S:.*]] = arith.cmpi ult, %[[N]], %[[L]] : index
// CHECK-NEXT:    scf.if %[[S]] {
// CHECK-NEXT:      scf.for %[[I:.*]] = %{{.*}} to %[[N]] step %{{.*}} {
// CHECK-NEXT:        memref.store %[[Z]], %dx[%[[I]]] {ad.unchecked} : memref<?xf64>
// CHECK-NEXT:      {{^ +[}]$}}
// CHECK-NEXT:    }
// CHECK-NEXT:    %tape = memref.alloc
// CHECK-NOT:     ad.parallel
// CHECK:         func.return
func.func @energy_grad(%x: memref<?xf64> {ad.noalias}, %dx: memref<?xf64> {ad.noalias, ad.zero_shadow = 0 : i64}, %seed: f64) {
  ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %tape = memref.alloc(%n) : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    %e = math.exp %a : f64
    memref.store %e, %tape[%i] : memref<?xf64>
  }
  scf.for %i = %c0 to %n step %c1 {
    %e = memref.load %tape[%i] : memref<?xf64>
    %d = memref.load %dx[%i] : memref<?xf64>
    %p = arith.mulf %e, %seed : f64
    %d2 = arith.addf %d, %p : f64
    memref.store %d2, %dx[%i] : memref<?xf64>
  }
  memref.dealloc %tape : memref<?xf64>
  func.return
}

// Next to a loop over the same range: fused into it, which keeps its own
// attributes (none), with no size guard (the fused store costs no pass).
// CHECK-LABEL: func.func @weighted_grad
// CHECK-NOT:     scf.if
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      memref.store %{{.*}}, %dx[%[[I]]] {ad.unchecked} : memref<?xf64>
// CHECK-NEXT:      %a = memref.load %x[%[[I]]] : memref<?xf64>
// CHECK:         {{^ +[}]$}}
// CHECK-NOT:     scf.for
// CHECK-NOT:     ad.parallel
// CHECK:         func.return
func.func @weighted_grad(%x: memref<?xf64> {ad.noalias}, %dx: memref<?xf64> {ad.noalias, ad.zero_shadow = 0 : i64}, %seed: f64) {
  ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    %d = memref.load %dx[%i] : memref<?xf64>
    %p = arith.mulf %a, %seed : f64
    %d2 = arith.addf %d, %p : f64
    memref.store %d2, %dx[%i] : memref<?xf64>
  }
  func.return
}

// Rank 2, C-contiguous: through a flat view, guarded by its element count.
// CHECK-LABEL: func.func @rows_grad
// CHECK:         %[[F:.*]] = memref.reinterpret_cast %dV
// CHECK:         %[[N:.*]] = memref.dim %[[F]], %{{.*}} : memref<?xf64>
// CHECK-NEXT:    %[[L:.*]] = arith.constant 4194304 : index
// CHECK-NEXT:    %[[S:.*]] = arith.cmpi ult, %[[N]], %[[L]] : index
// CHECK-NEXT:    scf.if %[[S]] {
// CHECK-NEXT:      scf.for
// CHECK-NEXT:        memref.store %{{.*}}, %[[F]][%{{.*}}] {ad.unchecked} : memref<?xf64>
func.func @rows_grad(%V: memref<?x?xf64> {ad.noalias}, %dV: memref<?x?xf64> {ad.noalias, ad.zero_shadow = 0 : i64}, %seed: f64) {
  ad.shadow_check %V, %dV : memref<?x?xf64>, memref<?x?xf64>
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %n = memref.dim %V, %c0 : memref<?x?xf64>
  scf.for %k = %c0 to %n step %c1 {
    %a = memref.load %V[%k, %c0] : memref<?x?xf64>
    %d = memref.load %dV[%k, %c0] : memref<?x?xf64>
    %p = arith.mulf %a, %seed : f64
    %d2 = arith.addf %d, %p : f64
    memref.store %d2, %dV[%k, %c0] : memref<?x?xf64>
  }
  func.return
}
