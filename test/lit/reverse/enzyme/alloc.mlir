// Enzyme-MLIR ReverseMode/alloc.mlir: a scalar stored into a local
// allocation and loaded back. Enzyme zero-fills the local buffer's shadow
// (`enzyme.fill_zero`); here the shadow of the allocation is created and
// set to zero before use, then the seed flows through it to x.
// Hand derivation: f(x) = x, df/dx * dr = dr: at x = 2, dr = 0.75: 0.75.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// IR-LABEL: func.func @test_fillzero_grad_a_a(%x: f32, %seed: f32) -> f32
// IR:         func.return
// CHECK: dx 0.75

func.func private @test_fillzero(%x: f32) -> f32 {
  %alloc = memref.alloc() : memref<f32>
  memref.store %x, %alloc[] : memref<f32>
  %ld = memref.load %alloc[] : memref<f32>
  func.return %ld : f32
}

func.func @main() {
  %x = arith.constant 2.0 : f32
  %dr = arith.constant 0.75 : f32
  %dx = ad.autodiff @test_fillzero(%x, %dr) {activity = [active], ret_activity = [active]} : (f32, f32) -> f32
  printf.print_format "dx {}\n", %dx : f32
  func.return
}
