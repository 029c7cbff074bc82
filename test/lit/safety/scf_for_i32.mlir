// scf.for with an i32 induction variable (from Enzyme's test
// ReverseMode/scf_for_memref.mlir, reduce_i32): the reverse loop counts in
// i32 too, and the tape's capacity is the trip count cast to index. It
// used to fail with `error: AssertionError`, without a location.
// RUN: ad-opt %s --reverse | filecheck %s
// RUN: ad-run %s | filecheck %s --check-prefix=OUT

// CHECK-LABEL: func.func @reduce_i32_grad_ac_a(%x: f32, %ub: i32, %seed: f32) -> f32
// CHECK:         %[[N:.*]] = arith.maxsi %ub, %lb : i32
// CHECK-NEXT:    %[[CAP:.*]] = arith.index_cast %[[N]] : i32 to index
// CHECK-NEXT:    %tape_sum_iter = memref.alloc(%[[CAP]]) {ad.workspace} : memref<?xf32>
// CHECK:         scf.for %iv2 = %lb to %ub step %step iter_args(%sum_iter = %sum) -> (f32) : i32 {
// CHECK:         scf.for %{{.*}} = %lb to %[[N]] step %step iter_args(%{{.*}} = %seed, %{{.*}} = %{{.*}}) -> (f32, f32) : i32 {

// d/dx x^4 at 1.5 = 4 * 1.5^3 = 13.5
// OUT: d x^4 = 13.5

func.func @reduce_i32(%x: f32, %ub: i32) -> (f32) {
  %lb = arith.constant 0 : i32
  %step = arith.constant 1 : i32
  %sum_0 = arith.constant 1.0 : f32
  %sum = scf.for %iv2 = %lb to %ub step %step
      iter_args(%sum_iter = %sum_0) -> (f32) : i32 {
    %sum_next = arith.mulf %sum_iter, %x : f32
    scf.yield %sum_next : f32
  }
  return %sum : f32
}

func.func @main() {
  %x = arith.constant 1.5 : f32
  %ub = arith.constant 4 : i32
  %one = arith.constant 1.0 : f32
  %d = ad.autodiff @reduce_i32(%x, %ub, %one) {activity = [active, const], ret_activity = [active]} : (f32, i32, f32) -> f32
  %e = arith.extf %d : f32 to f64
  printf.print_format "d x^4 = {}\n", %e : f64
  func.return
}
