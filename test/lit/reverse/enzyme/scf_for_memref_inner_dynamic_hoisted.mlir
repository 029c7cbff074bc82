// Enzyme-MLIR ReverseMode/scf_for_memref_inner_dynamic_hoisted.mlir: nested
// loops carrying a product, the outer to %ub_outer and the inner to
// %ub_inner (both arguments, the inner bound invariant in the outer loop),
// asked for as with --enzyme-wrap (active, const, const -> active). Enzyme
// hoists the inner tape into one 2-d buffer (ub_outer x ub_inner) and
// takes a subview per outer iteration; adpasses sizes one flat tape of
// ub_outer * ub_inner elements before the loops (the same memory) and
// pops it in the reversed nest.
// Hand derivation: reduce(x, m, n) = x^(m n): d/dx = m n x^(m n - 1):
// at x = 1.1, m = 2, n = 3: 6 x^5 = 9.66306; at x = 0.9, m = 3, n = 1:
// 3 x^2 = 2.43; at m = 3, n = 0: 0.
// RUN: ad-opt %s --reverse-wrap="fn=reduce activities=active,const,const rets=active name=dreduce" | filecheck %s --check-prefix=IR
// RUN: ad-opt %s --reverse-wrap="fn=reduce activities=active,const,const rets=active name=dreduce" | ad-run --entry run | filecheck %s

// IR-LABEL: func.func @reduce_grad_acc_a(%x: f32, %ub_outer: index, %ub_inner: index, %seed: f32) -> f32
// IR-DAG:     %[[N:.*]] = arith.maxsi %ub_inner, %{{.*}} : index
// IR-DAG:     %[[M:.*]] = arith.maxsi %ub_outer, %{{.*}} : index
// IR:         %[[CAP:.*]] = arith.muli %[[N]], %[[M]] : index
// IR:         %[[TAPE:.*]] = memref.alloc(%{{.*}}) {{.*}} : memref<?xf32>
// IR-NOT:     memref.alloc(
// IR:         scf.for %iv2 = %{{.*}} to %ub_outer
// IR-NEXT:      scf.for %iv = %{{.*}} to %ub_inner
// IR:         scf.for %{{.*}} to %[[M]] step {{.*}} -> (f32, f32) {
// IR-NEXT:      scf.for %{{.*}} to %[[N]] step {{.*}} -> (f32, f32) {
// IR:             memref.load %[[TAPE]]
// IR:         memref.dealloc %[[TAPE]]
// CHECK: dreduce 9.66306 2.43 0

func.func @reduce(%x: f32, %ub_outer: index, %ub_inner: index) -> f32 {
  %lb = arith.constant 0 : index
  %step = arith.constant 1 : index
  %sum_0 = arith.constant 1.0 : f32
  %sum2 = scf.for %iv2 = %lb to %ub_outer step %step iter_args(%sum_iter2 = %sum_0) -> (f32) {
    %sum = scf.for %iv = %lb to %ub_inner step %step iter_args(%sum_iter = %sum_iter2) -> (f32) {
      %sum_next = arith.mulf %sum_iter, %x : f32
      scf.yield %sum_next : f32
    }
    scf.yield %sum : f32
  }
  func.return %sum2 : f32
}

func.func private @dreduce(f32, index, index, f32) -> f32

func.func @run() {
  %one = arith.constant 1.0 : f32
  %x = arith.constant 1.1 : f32
  %x2 = arith.constant 0.9 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %a = func.call @dreduce(%x, %c2, %c3, %one) : (f32, index, index, f32) -> f32
  %b = func.call @dreduce(%x2, %c3, %c1, %one) : (f32, index, index, f32) -> f32
  %c = func.call @dreduce(%x, %c3, %c0, %one) : (f32, index, index, f32) -> f32
  printf.print_format "dreduce {} {} {}\n", %a : f32, %b : f32, %c : f32
  func.return
}
