// Enzyme-MLIR ReverseMode/dupnoneed_store.mlir: a function that only stores
// x^2 into an output memref passed `dupnoneed` (memref.store, and
// affine.store in a loop; Enzyme's third case stores through !llvm.ptr,
// outside adpasses' dialects).
// Hand derivations: stm: out[] = x^2, seeded by dout[] = 1.5: dx = 2 x 1.5
// = 6 at x = 2, and the store consumes the seed (dout[] = 0); sta: out[i] =
// x^2 for i < 4, dout = (0.5, 1, 1.5, 2): dx = 2 x sum dout = 20, dout = 0.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// The adjoint of the store reads the shadow and zeroes it.
// IR-LABEL: func.func @stm_grad_an_(%x: f64, %out: memref<f64>, %dout: memref<f64>) -> f64
// IR:         memref.load %dout[]
// IR:         memref.store %{{.*}}, %dout[]
// IR-LABEL: func.func @sta_grad_an_(
// IR-NOT:     affine.
// IR:         func.return
// CHECK: stm 6 0
// CHECK-NEXT: sta 20 0

func.func @stm(%x: f64, %out: memref<f64>) {
  %sq = arith.mulf %x, %x : f64
  memref.store %sq, %out[] : memref<f64>
  func.return
}

func.func @sta(%x: f64, %out: memref<4xf64>) {
  affine.for %i = 0 to 4 {
    %sq = arith.mulf %x, %x : f64
    affine.store %sq, %out[%i] : memref<4xf64>
  }
  func.return
}

func.func @main() {
  %x = arith.constant 2.0 : f64
  %o = memref.alloc() : memref<f64>
  %do = memref.alloc() : memref<f64>
  %s = arith.constant 1.5 : f64
  memref.store %s, %do[] : memref<f64>
  %a = ad.autodiff @stm(%x, %o, %do) {activity = [active, dupnoneed], ret_activity = []} : (f64, memref<f64>, memref<f64>) -> f64
  %r = memref.load %do[] : memref<f64>
  printf.print_format "stm {} {}\n", %a : f64, %r : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %half = arith.constant 0.5 : f64
  %one = arith.constant 1.0 : f64
  %o4 = memref.alloc() : memref<4xf64>
  %do4 = memref.alloc() : memref<4xf64>
  scf.for %i = %c0 to %c4 step %c1 {
    %i64 = arith.index_cast %i : index to i64
    %f = arith.sitofp %i64 : i64 to f64
    %k = arith.addf %f, %one : f64
    %v = arith.mulf %k, %half : f64
    memref.store %v, %do4[%i] : memref<4xf64>
  }
  %b = ad.autodiff @sta(%x, %o4, %do4) {activity = [active, dupnoneed], ret_activity = []} : (f64, memref<4xf64>, memref<4xf64>) -> f64
  %z = memref.load %do4[%c1] : memref<4xf64>
  printf.print_format "sta {} {}\n", %b : f64, %z : f64
  memref.dealloc %o : memref<f64>
  memref.dealloc %do : memref<f64>
  memref.dealloc %o4 : memref<4xf64>
  memref.dealloc %do4 : memref<4xf64>
  func.return
}
