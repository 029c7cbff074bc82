// Enzyme-MLIR ReverseMode/scf_for_memref_inner_dynamic.mlir: nested loops
// carrying a product, both running to the argument %ub, asked for as with
// --enzyme-wrap (active, const -> active). Enzyme allocates one inner tape
// per outer iteration (a memref of memrefs); adpasses sizes one tape for
// both loops before the outer loop (ub * ub, saturating instead of
// wrapping) and pops it in the reversed nest.
// Hand derivation: reduce(x, ub) = x^(ub^2): d/dx = ub^2 x^(ub^2 - 1):
// at x = 1.1, ub = 2: 4 x^3 = 5.324; at ub = 0 (no iteration): 0.
// RUN: ad-opt %s --reverse-wrap="fn=reduce activities=active,const rets=active name=dreduce" | filecheck %s --check-prefix=IR
// RUN: ad-opt %s --reverse-wrap="fn=reduce activities=active,const rets=active name=dreduce" | ad-run --entry run | filecheck %s

// IR-LABEL: func.func @reduce_grad_ac_a(%x: f32, %ub: index, %seed: f32) -> f32
// IR:         %[[N:.*]] = arith.maxsi %ub, %{{.*}} : index
// IR:         %[[CAP:.*]] = arith.muli %[[N]], %[[N]] : index
// IR:         %[[SAT:.*]] = arith.select %{{.*}}, %{{.*}}, %[[CAP]] : index
// IR:         %[[TAPE:.*]] = memref.alloc(%[[SAT]]) {{.*}} : memref<?xf32>
// IR-NOT:     memref.alloc(
// IR:         scf.for
// IR-NEXT:      scf.for
// IR:             memref.store %sum_iter, %[[TAPE]]
// IR:         scf.for {{.*}} -> (f32, f32) {
// IR-NEXT:      scf.for {{.*}} -> (f32, f32) {
// IR:             memref.load %[[TAPE]]
// IR:         memref.dealloc %[[TAPE]]
// CHECK: dreduce 5.324 0

func.func @reduce(%x: f32, %ub: index) -> f32 {
  %lb = arith.constant 0 : index
  %step = arith.constant 1 : index
  %sum_0 = arith.constant 1.0 : f32
  %sum2 = scf.for %iv2 = %lb to %ub step %step iter_args(%sum_iter2 = %sum_0) -> (f32) {
    %sum = scf.for %iv = %lb to %ub step %step iter_args(%sum_iter = %sum_iter2) -> (f32) {
      %sum_next = arith.mulf %sum_iter, %x : f32
      scf.yield %sum_next : f32
    }
    scf.yield %sum : f32
  }
  func.return %sum2 : f32
}

func.func private @dreduce(f32, index, f32) -> f32

func.func @run() {
  %one = arith.constant 1.0 : f32
  %x = arith.constant 1.1 : f32
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %a = func.call @dreduce(%x, %c2, %one) : (f32, index, f32) -> f32
  %b = func.call @dreduce(%x, %c0, %one) : (f32, index, f32) -> f32
  printf.print_format "dreduce {} {}\n", %a : f32, %b : f32
  func.return
}
