// Enzyme-MLIR ReverseMode/memcpy.mlir: `llvm.intr.memcpy` of n bytes between
// two dup `!llvm.ptr`s (twice, differing only in alignment attributes).
// Within our dialects the same copy is memref.copy: of a dynamic f64 vector
// (n / 8 elements) and of a 2 x 3 matrix. Its adjoint is Enzyme's loop:
// dsrc[i] += ddst[i], then ddst[i] = 0 (dst's old contents are overwritten).
// Hand derivation: dst = src; dsrc += ddst_in, ddst = 0: at src = (1, 2, 3),
// dsrc = 0.25, ddst = 0.5: dsrc = 0.75 each, ddst = 0, dst = (1, 2, 3);
// the matrix: src[i][j] = 3 i + j + 1, dsrc = 0.25, ddst = 0.5: dsrc = 0.75,
// ddst = 0, dst[1][2] = 6.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// The primal copy is kept; the reverse sweep loops over the shadows.
// IR-LABEL: func.func @copy1_grad_dd_(%dst: memref<?xf64>, %ddst: memref<?xf64>, %src: memref<?xf64>, %dsrc: memref<?xf64>)
// IR:         "memref.copy"(%src, %dst)
// IR:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// IR:         scf.for %[[I:.*]] =
// IR:           %[[D:.*]] = memref.load %ddst[%[[I]]]
// IR:           %[[S:.*]] = memref.load %dsrc[%[[I]]]
// IR:           %[[SUM:.*]] = arith.addf %[[S]], %[[D]] : f64
// IR:           memref.store %[[SUM]], %dsrc[%[[I]]]
// IR:           memref.store %[[ZERO]], %ddst[%[[I]]]
// IR-LABEL: func.func @copy2_grad_dd_(
// IR:         "memref.copy"(%src, %dst)
// IR:         scf.for
// IR:           scf.for
// IR:             arith.addf
// CHECK: copy1 dsrc 0.75 0.75 0.75 ddst 0 0 0 dst 1 2 3
// CHECK-NEXT: copy2 dsrc 0.75 0.75 ddst 0 0 dst 6

func.func @copy1(%dst: memref<?xf64>, %src: memref<?xf64>) {
  memref.copy %src, %dst : memref<?xf64> to memref<?xf64>
  func.return
}

func.func @copy2(%dst: memref<2x3xf64>, %src: memref<2x3xf64>) {
  memref.copy %src, %dst : memref<2x3xf64> to memref<2x3xf64>
  func.return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f64
  %half = arith.constant 0.5 : f64
  %quarter = arith.constant 0.25 : f64
  %src = memref.alloc(%c3) : memref<?xf64>
  %dsrc = memref.alloc(%c3) : memref<?xf64>
  %dst = memref.alloc(%c3) : memref<?xf64>
  %ddst = memref.alloc(%c3) : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    %i64 = arith.index_cast %i : index to i64
    %f = arith.sitofp %i64 : i64 to f64
    %v = arith.addf %f, %one : f64
    memref.store %v, %src[%i] : memref<?xf64>
    memref.store %quarter, %dsrc[%i] : memref<?xf64>
    memref.store %half, %ddst[%i] : memref<?xf64>
  }
  ad.autodiff @copy1(%dst, %ddst, %src, %dsrc) {activity = [dup, dup], ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>) -> ()
  %s0 = memref.load %dsrc[%c0] : memref<?xf64>
  %s1 = memref.load %dsrc[%c1] : memref<?xf64>
  %s2 = memref.load %dsrc[%c2] : memref<?xf64>
  %t0 = memref.load %ddst[%c0] : memref<?xf64>
  %t1 = memref.load %ddst[%c1] : memref<?xf64>
  %t2 = memref.load %ddst[%c2] : memref<?xf64>
  %y0 = memref.load %dst[%c0] : memref<?xf64>
  %y1 = memref.load %dst[%c1] : memref<?xf64>
  %y2 = memref.load %dst[%c2] : memref<?xf64>
  printf.print_format "copy1 dsrc {} {} {} ddst {} {} {} dst {} {} {}\n", %s0 : f64, %s1 : f64, %s2 : f64, %t0 : f64, %t1 : f64, %t2 : f64, %y0 : f64, %y1 : f64, %y2 : f64

  %m = memref.alloc() : memref<2x3xf64>
  %dm = memref.alloc() : memref<2x3xf64>
  %n = memref.alloc() : memref<2x3xf64>
  %dn = memref.alloc() : memref<2x3xf64>
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c3 step %c1 {
      %i3 = arith.muli %i, %c3 : index
      %k = arith.addi %i3, %j : index
      %k64 = arith.index_cast %k : index to i64
      %f = arith.sitofp %k64 : i64 to f64
      %v = arith.addf %f, %one : f64
      memref.store %v, %m[%i, %j] : memref<2x3xf64>
      memref.store %quarter, %dm[%i, %j] : memref<2x3xf64>
      memref.store %half, %dn[%i, %j] : memref<2x3xf64>
    }
  }
  ad.autodiff @copy2(%n, %dn, %m, %dm) {activity = [dup, dup], ret_activity = []} : (memref<2x3xf64>, memref<2x3xf64>, memref<2x3xf64>, memref<2x3xf64>) -> ()
  %u0 = memref.load %dm[%c0, %c0] : memref<2x3xf64>
  %u1 = memref.load %dm[%c1, %c2] : memref<2x3xf64>
  %v0 = memref.load %dn[%c0, %c0] : memref<2x3xf64>
  %v1 = memref.load %dn[%c1, %c2] : memref<2x3xf64>
  %w = memref.load %n[%c1, %c2] : memref<2x3xf64>
  printf.print_format "copy2 dsrc {} {} ddst {} {} dst {}\n", %u0 : f64, %u1 : f64, %v0 : f64, %v1 : f64, %w : f64
  memref.dealloc %src : memref<?xf64>
  memref.dealloc %dsrc : memref<?xf64>
  memref.dealloc %dst : memref<?xf64>
  memref.dealloc %ddst : memref<?xf64>
  memref.dealloc %m : memref<2x3xf64>
  memref.dealloc %dm : memref<2x3xf64>
  memref.dealloc %n : memref<2x3xf64>
  memref.dealloc %dn : memref<2x3xf64>
  func.return
}
