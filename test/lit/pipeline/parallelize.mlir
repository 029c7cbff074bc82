// RUN: ad-opt %s -p ad-parallelize | filecheck %s
// ad-parallelize alone: a loop marked ad.parallel whose iterations the alias
// analysis proves independent, and whose iter_args are sums, is outlined
// into a private function (the loop over lo .. hi, constants cloned in,
// other outside values as parameters) run by ad.parallel_for; any other
// marked loop loses its mark and stays serial.

// Independent, with a sum: outlined; kinds "s" (a sum).
// CHECK-LABEL: func.func @scale_sum(%x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}) -> f64 {
// CHECK:         %[[R:.*]] = "ad.parallel_for"(%c0, %n, %c1, %x, %y, %zero) <{callee = @scale_sum.par0, kinds = "s", operandSegmentSizes = array<i32: 1, 1, 1, 2, 1>}> : (index, index, index, memref<?xf64>, memref<?xf64>, f64) -> f64
// CHECK-NOT:     scf.for
// CHECK:         func.return %[[R]] : f64
// CHECK:       func.func private @scale_sum.par0(%lo: index, %hi: index, %step: index, %x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}, %[[INIT:.*]]: f64) -> f64 {
// CHECK-NEXT:    %two = arith.constant 2.000000e+00 : f64
// CHECK-NEXT:    %[[S:.*]] = scf.for %i = %lo to %hi step %step iter_args(%acc = %[[INIT]]) -> (f64) {
// CHECK-NEXT:      %a = memref.load %x[%i]
// CHECK-NEXT:      %b = arith.mulf %two, %a
// CHECK-NEXT:      memref.store %b, %y[%i]
// CHECK-NEXT:      %acc2 = arith.addf %acc, %a
// CHECK-NEXT:      scf.yield %acc2 : f64
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[S]] : f64
func.func @scale_sum(%x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f64
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %b = arith.mulf %two, %a : f64
    memref.store %b, %y[%i] : memref<?xf64>
    %acc2 = arith.addf %acc, %a : f64
    scf.yield %acc2 : f64
  } {ad.parallel = "prange"}
  func.return %r : f64
}

// A value yielded unchanged (the adjoint of a sum in its reverse loop) is
// kept: kinds "k".
// CHECK-LABEL: func.func @kept
// CHECK:         "ad.parallel_for"{{.*}}kinds = "k"
func.func @kept(%x: memref<?xf64>, %g: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%adj = %g) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %b = arith.mulf %adj, %a : f64
    memref.store %b, %x[%i] : memref<?xf64>
    scf.yield %adj : f64
  } {ad.parallel = "auto"}
  func.return %r : f64
}

// Iteration i reads what i - 1 wrote: serial, unmarked.
// CHECK-LABEL: func.func @recurrence
// CHECK-NOT:     ad.parallel_for
// CHECK:         scf.for
// CHECK-NOT:     ad.parallel
// CHECK:         func.return
func.func @recurrence(%x: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c1 to %n step %c1 {
    %j = arith.subi %i, %c1 : index
    %a = memref.load %x[%j] : memref<?xf64>
    %b = memref.load %x[%i] : memref<?xf64>
    %c = arith.mulf %a, %b : f64
    memref.store %c, %x[%i] : memref<?xf64>
  } {ad.parallel = "auto"}
  func.return
}

// A product is not a sum: serial.
// CHECK-LABEL: func.func @product
// CHECK-NOT:     ad.parallel
// CHECK:         func.return
func.func @product(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%p = %one) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %q = arith.mulf %p, %a : f64
    scf.yield %q : f64
  } {ad.parallel = "auto"}
  func.return %r : f64
}

// Arguments that may alias (no ad.noalias): y[i] may be x[i + 1]. Serial.
// CHECK-LABEL: func.func @may_alias
// CHECK-NOT:     ad.parallel
// CHECK:         func.return
func.func @may_alias(%x: memref<?xf64>, %y: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    memref.store %a, %y[%i] : memref<?xf64>
  } {ad.parallel = "auto"}
  func.return
}

// Every iteration adds into dw[0] (the reverse of a weight read by every
// iteration): carried as a sum from 0 (transforms/accumulators.py), added
// into dw[0] after the loop if it ran; the loop is then parallel.
// CHECK-LABEL: func.func @shared_shadow
// CHECK:         %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         %{{.*}}, %[[SUM:.*]] = "ad.parallel_for"(%c0, %n, %c1, %w, %x, %dx, %g, %[[Z]]) <{callee = @shared_shadow.par0, kinds = "ks"
// CHECK-NEXT:    %[[RAN:.*]] = arith.cmpi slt, %c0, %n : index
// CHECK-NEXT:    scf.if %[[RAN]] {
// CHECK-NEXT:      %[[OLD:.*]] = memref.load %dw[%c0] : memref<?xf64>
// CHECK-NEXT:      %[[NEW:.*]] = arith.addf %[[OLD]], %[[SUM]] : f64
// CHECK-NEXT:      memref.store %[[NEW]], %dw[%c0] : memref<?xf64>
// CHECK-NEXT:    }
// CHECK:       func.func private @shared_shadow.par0(
// CHECK:         scf.for %i = %lo to %hi step %step iter_args(%adj = %{{.*}}, %old = %{{.*}}) -> (f64, f64) {
// CHECK-NOT:       memref.load %dw
// CHECK:           %new = arith.addf %old, %b : f64
// CHECK-NEXT:      scf.yield %adj, %new : f64, f64
func.func @shared_shadow(%x: memref<?xf64> {ad.noalias}, %dx: memref<?xf64> {ad.noalias},
                         %w: memref<?xf64> {ad.noalias}, %dw: memref<?xf64> {ad.noalias}, %g: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%adj = %g) -> (f64) {
    %wv = memref.load %w[%c0] : memref<?xf64>
    %xv = memref.load %x[%i] : memref<?xf64>
    %a = arith.mulf %adj, %wv : f64
    %d = memref.load %dx[%i] : memref<?xf64>
    %d2 = arith.addf %d, %a : f64
    memref.store %d2, %dx[%i] : memref<?xf64>
    %b = arith.mulf %adj, %xv : f64
    %old = memref.load %dw[%c0] : memref<?xf64>
    %new = arith.addf %old, %b : f64
    memref.store %new, %dw[%c0] : memref<?xf64>
    scf.yield %adj : f64
  } {ad.parallel = "auto"}
  func.return
}

// dx[idx[i]] += ... (the reverse of a gather): iterations may add into the
// same element, so the loop is not independent; every access to %dx is such
// an accumulation, so they go to 16 private copies (transforms/privatize.py):
// a loop over the copies' chunks runs in parallel, each chunk adding into
// its copy %dx_private[%chunk, j], then the copies are added into %dx in
// chunk order; when the copies would be too large or more than the
// iterations, the loop runs serially.
// CHECK-LABEL: func.func @scatter_add
// CHECK:         %[[OK:.*]] = arith.andi
// CHECK:         scf.if %[[OK]] {
// CHECK:           %dx_private = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf64>
// CHECK:           "ad.parallel_for"({{.*}}) <{callee = @scatter_add.par0, kinds = ""
// CHECK:           scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:          %[[P:.*]] = memref.load %dx_private[%[[C]], %[[K]]] {ad.unchecked}
// CHECK-NEXT:          %[[D:.*]] = memref.load %dx[%[[K]]] {ad.unchecked}
// CHECK-NEXT:          %[[S:.*]] = arith.addf %[[D]], %[[P]] : f64
// CHECK-NEXT:          memref.store %[[S]], %dx[%[[K]]] {ad.unchecked}
// CHECK:           memref.dealloc %dx_private
// CHECK:         } else {
// CHECK-NEXT:      scf.for %i = %c0 to %n step %c1 {
// CHECK-NOT:       ad.parallel
// CHECK:       func.func private @scatter_add.par0(
// CHECK:         scf.for %chunk = %lo to %hi step %step {
// CHECK:           scf.for %i = %{{.*}} to %{{.*}} step %c1 {
// CHECK:             %old = memref.load %dx_private[%chunk, %j] : memref<?x?xf64>
// CHECK-NEXT:        %new = arith.addf %old, %g : f64
// CHECK-NEXT:        memref.store %new, %dx_private[%chunk, %j] : memref<?x?xf64>
func.func @scatter_add(%idx: memref<?xindex> {ad.noalias}, %w: memref<?xf64> {ad.noalias}, %dx: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %idx, %c0 : memref<?xindex>
  scf.for %i = %c0 to %n step %c1 {
    %j = memref.load %idx[%i] : memref<?xindex>
    %g = memref.load %w[%i] : memref<?xf64>
    %old = memref.load %dx[%j] : memref<?xf64>
    %new = arith.addf %old, %g : f64
    memref.store %new, %dx[%j] : memref<?xf64>
  } {ad.parallel = "auto"}
  func.return
}

// The same, but the loop also reads dx[i]: an access to %dx that is not an
// accumulation, so no copies: serial.
// CHECK-LABEL: func.func @scatter_add_and_read
// CHECK-NOT:     ad.parallel
// CHECK:         func.return
func.func @scatter_add_and_read(%idx: memref<?xindex> {ad.noalias}, %w: memref<?xf64> {ad.noalias}, %dx: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %idx, %c0 : memref<?xindex>
  scf.for %i = %c0 to %n step %c1 {
    %j = memref.load %idx[%i] : memref<?xindex>
    %g = memref.load %dx[%i] : memref<?xf64>
    %old = memref.load %dx[%j] : memref<?xf64>
    %new = arith.addf %old, %g : f64
    memref.store %new, %dx[%j] : memref<?xf64>
  } {ad.parallel = "auto"}
  func.return
}
