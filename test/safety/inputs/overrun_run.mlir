// The overrun reproducer as a program for ad-run: x has 5 elements, and
// its shadow dx is the first 5 of 8 elements of a buffer whose 6th is 100.
// The gradient reads x[5] (the primal does too): IndexError, exit status 1.
// A silent overrun of dx would print "d[5] = 102" instead.
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
