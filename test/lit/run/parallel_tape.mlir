// RUN: env ADPASSES_NUM_THREADS=3 ADPASSES_PARALLEL_MIN_WORK=1 ad-run %s | filecheck %s
// RUN: ad-opt %s --reverse --emit=llvm-ir | filecheck --check-prefix=LLVM %s
// A parallel loop whose gradient tapes a value per iteration (x[i] is
// overwritten by its square, the old x[i] taped) and whose sum is used
// after it (so its reverse is a loop of its own): the tape gets a fixed
// layout (a row per iteration, transforms/tape_layout.py) and both the
// forward and the reverse loop run on 3 threads (one chunk per thread,
// ADPASSES_PARALLEL_MIN_WORK=1). f(x) = 2 sum x_i^3, df/dx_i = 6 x_i^2:
// for x = 1..1000, dx = 6 (x = 1), 60000 (x = 100), 6e+06 (x = 1000),
// and x is squared in place. @cubes6 is the same on a static
// memref<6xf64>: its tape is a memref<6x1xf64> on the caller's stack.

func.func @cubes(%x: memref<?xf64> {ad.noalias}) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %two = arith.constant 2.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %sq = arith.mulf %a, %a : f64
    memref.store %sq, %x[%i] : memref<?xf64>
    %b = memref.load %x[%i] : memref<?xf64>
    %cube = arith.mulf %b, %a : f64
    %acc2 = arith.addf %acc, %cube : f64
    scf.yield %acc2 : f64
  } {ad.parallel = "prange"}
  %out = arith.mulf %r, %two : f64
  func.return %out : f64
}

func.func @cubes6(%x: memref<6xf64> {ad.noalias}) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f64
  %two = arith.constant 2.0 : f64
  %r = scf.for %i = %c0 to %c6 step %c1 iter_args(%acc = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<6xf64>
    %sq = arith.mulf %a, %a : f64
    memref.store %sq, %x[%i] : memref<6xf64>
    %b = memref.load %x[%i] : memref<6xf64>
    %cube = arith.mulf %b, %a : f64
    %acc2 = arith.addf %acc, %cube : f64
    scf.yield %acc2 : f64
  } {ad.parallel = "prange"}
  %out = arith.mulf %r, %two : f64
  func.return %out : f64
}

// Both loops of each gradient through the runtime's threads:
// LLVM-LABEL: define void @"u.cubes_grad_d_a"
// LLVM:         call void @"adpasses_parallel_run"({{.*}}@"u.cubes_grad_d_a.par0.worker"
// LLVM:         call void @"adpasses_parallel_run"({{.*}}@"u.cubes_grad_d_a.par1.worker"
// LLVM-LABEL: define void @"u.cubes6_grad_d_a"
// LLVM:         call void @"adpasses_parallel_run"({{.*}}@"u.cubes6_grad_d_a.par0.worker"
// LLVM:         call void @"adpasses_parallel_run"({{.*}}@"u.cubes6_grad_d_a.par1.worker"

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c99 = arith.constant 99 : index
  %c999 = arith.constant 999 : index
  %c1000 = arith.constant 1000 : index
  %one = arith.constant 1.0 : f64
  %zero = arith.constant 0.0 : f64
  %x = memref.alloc(%c1000) : memref<?xf64>
  %dx = memref.alloc(%c1000) : memref<?xf64>
  %x6 = memref.alloc() : memref<6xf64>
  %dx6 = memref.alloc() : memref<6xf64>
  scf.for %i = %c0 to %c1000 step %c1 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    %f1 = arith.addf %f, %one : f64
    memref.store %f1, %x[%i] : memref<?xf64>
    memref.store %zero, %dx[%i] : memref<?xf64>
  }
  scf.for %i = %c0 to %c6 step %c1 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    %f1 = arith.addf %f, %one : f64
    memref.store %f1, %x6[%i] : memref<6xf64>
    memref.store %zero, %dx6[%i] : memref<6xf64>
  }
  ad.autodiff @cubes(%x, %dx, %one) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  %d0 = memref.load %dx[%c0] : memref<?xf64>
  %d500 = memref.load %dx[%c99] : memref<?xf64>
  %d999 = memref.load %dx[%c999] : memref<?xf64>
  %x999 = memref.load %x[%c999] : memref<?xf64>
  // CHECK: dx = 6 60000 6e+06 x[999] = 1e+06
  printf.print_format "dx = {} {} {} x[999] = {}\n", %d0 : f64, %d500 : f64, %d999 : f64, %x999 : f64
  ad.autodiff @cubes6(%x6, %dx6, %one) {activity = [dup], ret_activity = [active]} : (memref<6xf64>, memref<6xf64>, f64) -> ()
  %e0 = memref.load %dx6[%c0] : memref<6xf64>
  %e5 = memref.load %dx6[%c5] : memref<6xf64>
  // CHECK-NEXT: dx6 = 6 216
  printf.print_format "dx6 = {} {}\n", %e0 : f64, %e5 : f64
  memref.dealloc %x : memref<?xf64>
  memref.dealloc %dx : memref<?xf64>
  memref.dealloc %x6 : memref<6xf64>
  memref.dealloc %dx6 : memref<6xf64>
  func.return
}
