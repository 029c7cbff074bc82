// Enzyme-MLIR ReverseMode/affine_for2.mlir: x^n by an affine.for whose
// upper bound is a symbol (the argument %n), asked for as with
// --enzyme-wrap (active, const -> active). The bound is not a constant, so
// the tape of the carried product is a heap buffer of n elements
// (Enzyme: memref.alloc(%n)), and the reverse loop runs n times.
// Hand derivation: d/dx x^n = n x^(n-1): at x = 1.5, n = 3: 6.75;
// at x = -2, n = 4: -32; n = 0 (no iteration): 0.
// RUN: ad-opt %s --reverse-wrap="fn=reduce activities=active,const rets=active name=dreduce" | filecheck %s --check-prefix=IR
// RUN: ad-opt %s --reverse-wrap="fn=reduce activities=active,const rets=active name=dreduce" | ad-run --entry run | filecheck %s

// IR-LABEL: func.func @reduce_grad_ac_a(%x: f32, %n: index, %seed: f32) -> f32
// IR-NOT:     affine.for
// IR:         %[[CAP:.*]] = arith.maxsi %n, %{{.*}} : index
// IR:         memref.alloc(%[[CAP]]) {{.*}} : memref<?xf32>
// IR:         scf.for %{{.*}} = %{{.*}} to %n step
// IR:         scf.for %{{.*}} = %{{.*}} to %[[CAP]] step %{{.*}} iter_args({{.*}}) -> (f32, f32)
// IR:           arith.mulf
// IR:         memref.dealloc
// CHECK: dreduce 6.75 -32 0

func.func @reduce(%x: f32, %n: index) -> f32 {
  %sum_0 = arith.constant 1.0 : f32
  %sum = affine.for %iv = 0 to %n iter_args(%sum_iter = %sum_0) -> (f32) {
    %sum_next = arith.mulf %sum_iter, %x : f32
    affine.yield %sum_next : f32
  }
  func.return %sum : f32
}

func.func private @dreduce(f32, index, f32) -> f32

func.func @run() {
  %one = arith.constant 1.0 : f32
  %x1 = arith.constant 1.5 : f32
  %x2 = arith.constant -2.0 : f32
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %a = func.call @dreduce(%x1, %c3, %one) : (f32, index, f32) -> f32
  %b = func.call @dreduce(%x2, %c4, %one) : (f32, index, f32) -> f32
  %c = func.call @dreduce(%x1, %c0, %one) : (f32, index, f32) -> f32
  printf.print_format "dreduce {} {} {}\n", %a : f32, %b : f32, %c : f32
  func.return
}
