// RUN: env ADPASSES_NUM_THREADS=3 ADPASSES_PARALLEL_MIN_WORK=1 ad-run %s | filecheck %s
// RUN: ad-opt %s --reverse --emit=llvm-ir | filecheck --check-prefix=LLVM %s
// A loop marked ad.parallel runs on 3 threads (ADPASSES_PARALLEL_MIN_WORK=1:
// one chunk per thread however small the loop; chunks 0..333, 334..666,
// 667..999 of 1000 iterations): y = 2 x everywhere, the sum of x = 1..1000
// is 500500 (exact in f64), and the gradient of sum(x[i]^2) (its forward
// loop and its reverse both parallel) is 2 x.

func.func @scale_sum(%x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f64
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %b = arith.mulf %two, %a : f64
    memref.store %b, %y[%i] : memref<?xf64>
    %acc2 = arith.addf %acc, %a : f64
    scf.yield %acc2 : f64
  } {ad.parallel = "prange"}
  func.return %r : f64
}

func.func @squares(%x: memref<?xf64> {ad.noalias}) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %sq = arith.mulf %a, %a : f64
    %acc2 = arith.addf %acc, %sq : f64
    scf.yield %acc2 : f64
  } {ad.parallel = "prange"}
  func.return %r : f64
}

// The primal loop and the gradient's loop run through the runtime's threads:
// LLVM-LABEL: define double @"u.scale_sum"
// LLVM:         call void @"adpasses_parallel_run"({{.*}}@"u.scale_sum.par0.worker"
// LLVM-LABEL: define void @"u.squares_grad_d_a"
// LLVM:         call void @"adpasses_parallel_run"({{.*}}@"u.squares_grad_d_a.par0.worker"
// The gradient's chunk returns nothing: the gradient does not return the
// primal's sum, which ad-parallelize drops (transforms/dead_carried.py).
// LLVM-LABEL: define internal void @"u.squares_grad_d_a.par0"(i64 %"lo", i64 %"hi", i64 %"step"

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c500 = arith.constant 500 : index
  %c999 = arith.constant 999 : index
  %c1000 = arith.constant 1000 : index
  %one = arith.constant 1.0 : f64
  %zero = arith.constant 0.0 : f64
  %x = memref.alloc(%c1000) : memref<?xf64>
  %y = memref.alloc(%c1000) : memref<?xf64>
  %dx = memref.alloc(%c1000) : memref<?xf64>
  scf.for %i = %c0 to %c1000 step %c1 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    %f1 = arith.addf %f, %one : f64
    memref.store %f1, %x[%i] : memref<?xf64>
    memref.store %zero, %dx[%i] : memref<?xf64>
  }
  %s = func.call @scale_sum(%x, %y) : (memref<?xf64>, memref<?xf64>) -> f64
  %y0 = memref.load %y[%c0] : memref<?xf64>
  %y500 = memref.load %y[%c500] : memref<?xf64>
  %y999 = memref.load %y[%c999] : memref<?xf64>
  // CHECK: sum = 500500 y = 2 1002 2000
  printf.print_format "sum = {} y = {} {} {}\n", %s : f64, %y0 : f64, %y500 : f64, %y999 : f64
  ad.autodiff @squares(%x, %dx, %one) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  %d0 = memref.load %dx[%c0] : memref<?xf64>
  %d500 = memref.load %dx[%c500] : memref<?xf64>
  %d999 = memref.load %dx[%c999] : memref<?xf64>
  // CHECK-NEXT: dx = 2 1002 2000
  printf.print_format "dx = {} {} {}\n", %d0 : f64, %d500 : f64, %d999 : f64
  memref.dealloc %x : memref<?xf64>
  memref.dealloc %y : memref<?xf64>
  memref.dealloc %dx : memref<?xf64>
  func.return
}
