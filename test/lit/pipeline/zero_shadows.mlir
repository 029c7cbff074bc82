// RUN: ad-opt %s -p ad-zero-shadows | filecheck %s
// RUN: ad-opt %s -p ad-zero-shadows,ad-parallelize | filecheck %s --check-prefix=PAR
// ad-zero-shadows: a shadow argument marked `ad.zero_shadow = P` (P: its
// primal) is zero-filled by the function itself, before the first op that
// may touch array contents, in a loop marked `ad.parallel = "zero"` (the
// caller, grad, passes np.empty); a rank-1 fill fuses into the next loop
// over the same range, a C-contiguous rank-2 one fills a flat view.

// Rank 1, the next loop over the same range (0, dim(x, 0), 1): fused, the
// zero stored before the loop's accumulation reads it (LLVM forwards it).
// CHECK-LABEL: func.func @weighted_grad
// CHECK-SAME:    (%x: memref<?xf64> {ad.noalias}, %dx: memref<?xf64> {ad.noalias}, %seed: f64)
// CHECK:         %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      memref.store %[[Z]], %dx[%[[I]]] {ad.unchecked} : memref<?xf64>
// CHECK-NEXT:      %a = memref.load %x[%[[I]]] : memref<?xf64>
// CHECK-NEXT:      %d = memref.load %dx[%[[I]]] : memref<?xf64>
// CHECK:         } {ad.parallel = "prange"}
// CHECK-NOT:     scf.for
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
  } {ad.parallel = "prange"}
  func.return
}

// Rank 2, C-contiguous: one loop over all elements of a flat view, of its
// own (fused, each row would be a memset call), on the pool.
// CHECK-LABEL: func.func @rows_grad
// CHECK-SAME:    (%V: memref<?x?xf64> {ad.noalias}, %dV: memref<?x?xf64> {ad.noalias}, %seed: f64)
// CHECK:         %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         %[[N0:.*]] = memref.dim %dV, %{{.*}} : memref<?x?xf64>
// CHECK:         %[[N1:.*]] = memref.dim %dV, %{{.*}} : memref<?x?xf64>
// CHECK:         %[[FLAT:.*]] = memref.reinterpret_cast %dV to offset: [0], sizes: [%{{.*}}], strides: [1] : memref<?x?xf64> to memref<?xf64>
// CHECK:         scf.for %[[E:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      memref.store %[[Z]], %[[FLAT]][%[[E]]] {ad.unchecked} : memref<?xf64>
// CHECK-NEXT:    } {ad.parallel = "zero"}
// CHECK-NEXT:    scf.for %k =
// CHECK:         } {ad.parallel = "prange"}

// Outlined, the fill's chunk loop keeps its constant step (one memset per
// chunk in LLVM); the user's loop takes the step parameter.
// PAR-LABEL: func.func @rows_grad
// PAR:         "ad.parallel_for"({{.*}}) <{callee = @rows_grad.par0
// PAR-NEXT:    "ad.parallel_for"({{.*}}) <{callee = @rows_grad.par1
// PAR-LABEL: func.func private @rows_grad.par1
// PAR:         scf.for %k = %lo to %hi step %step {
// PAR-LABEL: func.func private @rows_grad.par0
// PAR-SAME:    (%lo: index, %hi: index, %step: index, %{{.*}}: memref<?xf64> {ad.noalias})
// PAR:         %[[ONE:.*]] = arith.constant 1 : index
// PAR-NEXT:    scf.for %{{.*}} = %lo to %hi step %[[ONE]] {
func.func @rows_grad(%V: memref<?x?xf64> {ad.noalias}, %dV: memref<?x?xf64> {ad.noalias, ad.zero_shadow = 0 : i64}, %seed: f64) {
  ad.shadow_check %V, %dV : memref<?x?xf64>, memref<?x?xf64>
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %n = memref.dim %V, %c0 : memref<?x?xf64>
  scf.for %k = %c0 to %n step %c1 {
    %a = memref.load %V[%k, %c0] : memref<?x?xf64>
    %d = memref.load %dV[%k, %c0] : memref<?x?xf64>
    %d2 = arith.addf %d, %a : f64
    memref.store %d2, %dV[%k, %c0] : memref<?x?xf64>
  } {ad.parallel = "prange"}
  func.return
}

// A loop over another range (step 2 up to n: its last iteration's i + 1
// may be n): the rank-1 fill stays a loop of its own.
// CHECK-LABEL: func.func @pairs_grad
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      memref.store %{{.*}}, %dx[%{{.*}}] {ad.unchecked} : memref<?xf64>
// CHECK-NEXT:    } {ad.parallel = "zero"}
// CHECK-NEXT:    scf.for %i = %c0 to %n step %c2 {
func.func @pairs_grad(%x: memref<?xf64> {ad.noalias}, %dx: memref<?xf64> {ad.noalias, ad.zero_shadow = 0 : i64}, %seed: f64) {
  ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c2 {
    %d = memref.load %dx[%i] : memref<?xf64>
    %d2 = arith.addf %d, %seed : f64
    memref.store %d2, %dx[%i] : memref<?xf64>
  } {ad.parallel = "prange"}
  func.return
}

// A loop from 0 by a constant step s to n - c, c >= s - 1 (kernel 1's
// `prange(0, len(x) - 1, 2)`): the fill is fitted to it, zeroing elements
// i .. i + s - 1 in iteration i (all below n, no guard) and fused, so LLVM
// forwards the zeros to the loop's reads; a loop of its own zeroes the
// elements from s * ceil(ub / s) on (none or one here).
// CHECK-LABEL: func.func @diff_grad
// CHECK:         %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         %[[N:.*]] = memref.dim %x, %{{.*}} : memref<?xf64>
// CHECK:         %[[C:.*]] = arith.ceildivsi %ub, %[[S:.*]] : index
// CHECK-NEXT:    %[[T:.*]] = arith.muli %[[C]], %[[S]] : index
// CHECK-NEXT:    %[[T0:.*]] = arith.maxsi %[[T]], %{{.*}} : index
// CHECK-NEXT:    %[[START:.*]] = arith.minsi %[[T0]], %[[N]] : index
// CHECK-NEXT:    scf.for %[[E:.*]] = %[[START]] to %[[N]] step %{{.*}} {
// CHECK-NEXT:      memref.store %[[Z]], %dx[%[[E]]] {ad.unchecked} : memref<?xf64>
// CHECK-NEXT:    } {ad.parallel = "zero"}
// CHECK-NEXT:    scf.for %i = %c0 to %ub step %c2 {
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[I1:.*]] = arith.addi %i, %[[ONE]] : index
// CHECK-NEXT:      memref.store %[[Z]], %dx[%i] {ad.unchecked} : memref<?xf64>
// CHECK-NEXT:      memref.store %[[Z]], %dx[%[[I1]]] {ad.unchecked} : memref<?xf64>
// CHECK-NEXT:      %j = arith.addi %i, %c1 : index
// CHECK-NEXT:      %d = memref.load %dx[%i] : memref<?xf64>
// CHECK:         } {ad.parallel = "prange"}
func.func @diff_grad(%x: memref<?xf64> {ad.noalias}, %dx: memref<?xf64> {ad.noalias, ad.zero_shadow = 0 : i64}, %seed: f64) {
  ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %ub = arith.subi %n, %c1 : index
  scf.for %i = %c0 to %ub step %c2 {
    %j = arith.addi %i, %c1 : index
    %d = memref.load %dx[%i] : memref<?xf64>
    %d2 = arith.subf %d, %seed : f64
    memref.store %d2, %dx[%i] : memref<?xf64>
    %e = memref.load %dx[%j] : memref<?xf64>
    %e2 = arith.addf %e, %seed : f64
    memref.store %e2, %dx[%j] : memref<?xf64>
  } {ad.parallel = "prange"}
  func.return
}

// The loop reads dx[i + 2], which iteration i + 2 would zero only later:
// not fused, the fill over all of dx stays a loop of its own.
// CHECK-LABEL: func.func @reads_ahead_grad
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      memref.store %{{.*}}, %dx[%{{.*}}] {ad.unchecked} : memref<?xf64>
// CHECK-NEXT:    } {ad.parallel = "zero"}
// CHECK-NEXT:    scf.for %i = %c0 to %ub step %c2 {
// CHECK-NEXT:      %j = arith.addi %i, %c2 : index
// CHECK-NEXT:      %d = memref.load %dx[%j] : memref<?xf64>
func.func @reads_ahead_grad(%x: memref<?xf64> {ad.noalias}, %dx: memref<?xf64> {ad.noalias, ad.zero_shadow = 0 : i64}, %seed: f64) {
  ad.shadow_check %x, %dx : memref<?xf64>, memref<?xf64>
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %ub = arith.subi %n, %c3 : index
  scf.for %i = %c0 to %ub step %c2 {
    %j = arith.addi %i, %c2 : index
    %d = memref.load %dx[%j] : memref<?xf64>
    %d2 = arith.addf %d, %seed : f64
    memref.store %d2, %dx[%i] : memref<?xf64>
  }
  func.return
}

// Unmarked arguments: nothing changes.
// CHECK-LABEL: func.func @unmarked
// CHECK-NOT:     ad.parallel = "zero"
// CHECK:         func.return
func.func @unmarked(%x: memref<?xf64>, %dx: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<?xf64>
  memref.store %v, %dx[%c0] : memref<?xf64>
  func.return
}
