// Enzyme-MLIR ReverseMode/affine_for.mlir: x^128 by an affine.for of 128
// multiplications (as with --enzyme-wrap: active -> active).
// Hand derivation: 128 x^127: at x = 1: 128; at x = -1: -128.
// RUN: ad-opt %s --reverse-wrap="fn=reduce name=dreduce" | filecheck %s --check-prefix=IR
// RUN: ad-opt %s --reverse-wrap="fn=reduce name=dreduce" | ad-run --entry run | filecheck %s

// Lowered to scf.for; the product is taped in a stack buffer of 128 f32.
// IR-LABEL: func.func @reduce_grad_a_a(%x: f32, %seed: f32) -> f32
// IR-NOT:     affine.for
// IR:         memref.alloca() : memref<128xf32>
// IR:         scf.for {{.*}} -> (f32, f32) {
// CHECK: dreduce 128 -128

func.func @reduce(%x: f32) -> f32 {
  %sum_0 = arith.constant 1.0 : f32
  %sum = affine.for %iv = 0 to 128 iter_args(%sum_iter = %sum_0) -> (f32) {
    %sum_next = arith.mulf %sum_iter, %x : f32
    affine.yield %sum_next : f32
  }
  func.return %sum : f32
}

func.func private @dreduce(f32, f32) -> f32

func.func @run() {
  %p = arith.constant 1.0 : f32
  %m = arith.constant -1.0 : f32
  %a = func.call @dreduce(%p, %p) : (f32, f32) -> f32
  %b = func.call @dreduce(%m, %p) : (f32, f32) -> f32
  printf.print_format "dreduce {} {}\n", %a : f32, %b : f32
  func.return
}
