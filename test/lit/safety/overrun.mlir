// The overrun reproducer (../shared/repros/mlir/overrun.mlir) as a program,
// through the reverse pipeline run step by step (%{reverse_steps}, check
// elision last) with canonicalize, cse or dce appended: the gradient's
// shadow access one past the end still stops with an IndexError (it used to
// write d[5], the neighbour of the 5-element shadow, with
// ad-reverse{simplify=false},canonicalize).
// RUN: ad-opt %s -p '%{reverse_steps},canonicalize' > %t.canonicalize.mlir
// RUN: not ad-run %t.canonicalize.mlir 2>&1 | filecheck %s
// RUN: ad-opt %s -p '%{reverse_steps},cse' > %t.cse.mlir
// RUN: not ad-run %t.cse.mlir 2>&1 | filecheck %s
// RUN: ad-opt %s -p '%{reverse_steps},dce' > %t.dce.mlir
// RUN: not ad-run %t.dce.mlir 2>&1 | filecheck %s
// RUN: ad-opt %s -p '%{reverse_steps_no_simplify},canonicalize,cse,dce' > %t.all.mlir
// RUN: not ad-run %t.all.mlir 2>&1 | filecheck %s
// RUN: ad-opt %s -p 'ad-reverse{simplify=false},canonicalize,ad-elide-shadow-checks' > %t.between.mlir
// RUN: not ad-run %t.between.mlir 2>&1 | filecheck %s

// CHECK-NOT: d[5]
// CHECK: IndexError: index 5 is out of bounds for axis 0 with size 5 (at
// CHECK-NOT: d[5]
func.func @overrun(%x: memref<?xf64> {ad.noalias}) -> f64 {
  %0 = arith.constant 1 : index
  %1 = arith.constant 2 : index
  %2 = arith.constant 0 : index
  %s = arith.constant 0.000000e+00 : f64
  %3 = memref.dim %x, %2 : memref<?xf64>
  %s_1 = scf.for %i = %2 to %3 step %1 iter_args(%s_2 = %s) -> (f64) {
    %4 = arith.addi %i, %0 : index
    %5 = memref.load %x[%4] : memref<?xf64>
    %6 = memref.load %x[%i] : memref<?xf64>
    %d = arith.subf %5, %6 : f64
    %7 = arith.mulf %d, %d : f64
    %s_3 = arith.addf %s_2, %7 : f64
    scf.yield %s_3 : f64
  }
  func.return %s_1 : f64
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f64
  %hundred = arith.constant 100.0 : f64
  %one = arith.constant 1.0 : f64
  %big = memref.alloc(%c8) : memref<?xf64>
  %bigd = memref.alloc(%c8) : memref<?xf64>
  scf.for %i = %c0 to %c8 step %c1 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    memref.store %f, %big[%i] : memref<?xf64>
    memref.store %zero, %bigd[%i] : memref<?xf64>
  }
  memref.store %hundred, %bigd[%c5] : memref<?xf64>
  %x = memref.reinterpret_cast %big to offset: [0], sizes: [%c5], strides: [1] : memref<?xf64> to memref<?xf64>
  %dx = memref.reinterpret_cast %bigd to offset: [0], sizes: [%c5], strides: [1] : memref<?xf64> to memref<?xf64>
  ad.autodiff @overrun(%x, %dx, %one) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  %d5 = memref.load %bigd[%c5] : memref<?xf64>
  printf.print_format "d[5] = {}\n", %d5 : f64
  func.return
}
