// Enzyme-MLIR ReverseMode/scf_parallel.mlir: y[i] = x[i]^2 in an
// scf.parallel over noalias memrefs (Enzyme's llvm alias-scope declaration
// is left out: llvm dialect). adpasses expands scf.parallel into scf.for
// before differentiating, so the shadow update needs no atomic add.
// Hand derivation: dx[i] += 2 x[i] dy[i], and dy is consumed (zeroed): at
// x = (1, 2, 3, 4), dy = 0.5, dx = 0: dx = (1, 2, 3, 4), dy = 0.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// IR-LABEL: func.func @foo_grad_dd_(
// IR-NOT:     scf.parallel
// IR:         scf.for
// IR:           memref.load %dy
// IR:           memref.store %{{.*}}, %dy
// CHECK: dx 1 2 3 4 dy 0 0

func.func @foo(%x: memref<?xf32> {llvm.noalias}, %y: memref<?xf32> {llvm.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%arg9) = (%c0) to (%c4) step (%c1) {
    %0 = memref.load %x[%arg9] : memref<?xf32>
    %1 = arith.mulf %0, %0 : f32
    memref.store %1, %y[%arg9] : memref<?xf32>
    scf.reduce
  }
  func.return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %zero = arith.constant 0.0 : f32
  %x = memref.alloc(%c4) : memref<?xf32>
  %dx = memref.alloc(%c4) : memref<?xf32>
  %y = memref.alloc(%c4) : memref<?xf32>
  %dy = memref.alloc(%c4) : memref<?xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %i64 = arith.index_cast %i : index to i64
    %f = arith.sitofp %i64 : i64 to f32
    %v = arith.addf %f, %one : f32
    memref.store %v, %x[%i] : memref<?xf32>
    memref.store %zero, %dx[%i] : memref<?xf32>
    memref.store %half, %dy[%i] : memref<?xf32>
  }
  ad.autodiff @foo(%x, %dx, %y, %dy) {activity = [dup, dup], ret_activity = []} : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
  %d0 = memref.load %dx[%c0] : memref<?xf32>
  %d1 = memref.load %dx[%c1] : memref<?xf32>
  %d2 = memref.load %dx[%c2] : memref<?xf32>
  %d3 = memref.load %dx[%c3] : memref<?xf32>
  %e0 = memref.load %dy[%c0] : memref<?xf32>
  %e3 = memref.load %dy[%c3] : memref<?xf32>
  printf.print_format "dx {} {} {} {} dy {} {}\n", %d0 : f32, %d1 : f32, %d2 : f32, %d3 : f32, %e0 : f32, %e3 : f32
  memref.dealloc %x : memref<?xf32>
  memref.dealloc %dx : memref<?xf32>
  memref.dealloc %y : memref<?xf32>
  memref.dealloc %dy : memref<?xf32>
  func.return
}
