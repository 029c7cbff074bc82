// Enzyme-MLIR ReverseMode/memref.mlir: a rank-0 memref loaded and returned.
// Hand derivation: f(x) = x[], so the seed is added to the shadow:
// dx[] = 0.25 + 3 = 3.25.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// IR-LABEL: func.func @loadandret_grad_d_a(%x: memref<f64>, %dx: memref<f64>, %seed: f64)
// IR:         %[[OLD:.*]] = memref.load %dx[]
// IR-NEXT:    %[[NEW:.*]] = arith.addf %[[OLD]], %seed : f64
// IR-NEXT:    memref.store %[[NEW]], %dx[]

func.func @loadandret(%x: memref<f64>) -> f64 {
  %res = memref.load %x[] : memref<f64>
  func.return %res : f64
}

func.func @main() {
  %x = memref.alloc() : memref<f64>
  %dx = memref.alloc() : memref<f64>
  %v = arith.constant 2.0 : f64
  %q = arith.constant 0.25 : f64
  %s = arith.constant 3.0 : f64
  memref.store %v, %x[] : memref<f64>
  memref.store %q, %dx[] : memref<f64>
  ad.autodiff @loadandret(%x, %dx, %s) {activity = [dup], ret_activity = [active]} : (memref<f64>, memref<f64>, f64) -> ()
  %g = memref.load %dx[] : memref<f64>
  // CHECK: dx 3.25
  printf.print_format "dx {}\n", %g : f64
  memref.dealloc %x : memref<f64>
  memref.dealloc %dx : memref<f64>
  func.return
}
