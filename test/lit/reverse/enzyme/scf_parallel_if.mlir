// Enzyme-MLIR ReverseMode/scf_parallel_if.mlir: an scf.parallel (no
// explicit scf.reduce) inside an scf.if on the array's length; the product
// of a dup array and a const array stored into a dup array. The const
// factor is taped (the output array may alias it: no noalias here), Enzyme
// in an alloc of the loop's length inside the if, adpasses before the if
// (for the length the loop may run); the reverse sweep is an scf.if around
// the reversed loop.
// Hand derivation: y[i] = a[i] b[i]: da[i] += b[i] dy[i], dy consumed:
// at a = (1, 2, 3), b = (2, 3, 4), da = 0.25, dy = 0.5:
// da = (1.25, 1.75, 2.25), dy = (0, 0, 0); y = (2, 6, 12).
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// IR-LABEL: func.func @scale_grad_dcd_(%arg0: memref<?xf64>, %darg0: memref<?xf64>, %arg1: memref<?xf64>, %arg2: memref<?xf64>, %darg2: memref<?xf64>)
// IR-NOT:     scf.parallel
// IR:         %[[TAPE:.*]] = memref.alloc(%{{.*}}) {{.*}} : memref<?xf64>
// IR:         scf.if %[[C:.*]] {
// IR:           scf.for
// IR:             %[[B:.*]] = memref.load %arg1
// IR:             memref.store %[[B]], %[[TAPE]]
// IR:         scf.if %[[C]] {
// IR:           scf.for
// IR:             memref.load %[[TAPE]]
// IR:             memref.store %{{.*}}, %darg2
// IR:             memref.store %{{.*}}, %darg0
// IR:         memref.dealloc %[[TAPE]]
// CHECK: da 1.25 1.75 2.25 dy 0 0 0 y 2 6 12

func.func @scale(%arg0: memref<?xf64>, %arg1: memref<?xf64>, %arg2: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %dim = memref.dim %arg0, %c0 : memref<?xf64>
  %0 = arith.cmpi sgt, %dim, %c0 : index
  scf.if %0 {
    scf.parallel (%arg3) = (%c0) to (%dim) step (%c1) {
      %1 = memref.load %arg0[%arg3] : memref<?xf64>
      %2 = memref.load %arg1[%arg3] : memref<?xf64>
      %3 = arith.mulf %1, %2 : f64
      memref.store %3, %arg2[%arg3] : memref<?xf64>
    }
  }
  func.return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f64
  %two = arith.constant 2.0 : f64
  %half = arith.constant 0.5 : f64
  %quarter = arith.constant 0.25 : f64
  %a = memref.alloc(%c3) : memref<?xf64>
  %da = memref.alloc(%c3) : memref<?xf64>
  %b = memref.alloc(%c3) : memref<?xf64>
  %y = memref.alloc(%c3) : memref<?xf64>
  %dy = memref.alloc(%c3) : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    %i64 = arith.index_cast %i : index to i64
    %f = arith.sitofp %i64 : i64 to f64
    %av = arith.addf %f, %one : f64
    %bv = arith.addf %f, %two : f64
    memref.store %av, %a[%i] : memref<?xf64>
    memref.store %bv, %b[%i] : memref<?xf64>
    memref.store %quarter, %da[%i] : memref<?xf64>
    memref.store %half, %dy[%i] : memref<?xf64>
  }
  ad.autodiff @scale(%a, %da, %b, %y, %dy) {activity = [dup, const, dup], ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>) -> ()
  %d0 = memref.load %da[%c0] : memref<?xf64>
  %d1 = memref.load %da[%c1] : memref<?xf64>
  %d2 = memref.load %da[%c2] : memref<?xf64>
  %e0 = memref.load %dy[%c0] : memref<?xf64>
  %e1 = memref.load %dy[%c1] : memref<?xf64>
  %e2 = memref.load %dy[%c2] : memref<?xf64>
  %y0 = memref.load %y[%c0] : memref<?xf64>
  %y1 = memref.load %y[%c1] : memref<?xf64>
  %y2 = memref.load %y[%c2] : memref<?xf64>
  printf.print_format "da {} {} {} dy {} {} {} y {} {} {}\n", %d0 : f64, %d1 : f64, %d2 : f64, %e0 : f64, %e1 : f64, %e2 : f64, %y0 : f64, %y1 : f64, %y2 : f64
  memref.dealloc %a : memref<?xf64>
  memref.dealloc %da : memref<?xf64>
  memref.dealloc %b : memref<?xf64>
  memref.dealloc %y : memref<?xf64>
  memref.dealloc %dy : memref<?xf64>
  func.return
}
