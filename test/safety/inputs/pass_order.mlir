// Kernels whose accesses go out of bounds for some arguments (an index
// argument larger than the arrays, a constant index past a short array):
// neighbours of the overrun reproducer for test_safety_pass_order.py. Each
// gradient must raise IndexError whatever xDSL passes run after ad-reverse.

// In-place square of x[0..n): the reverse sweep reads and writes dx[i].
func.func @square_n(%x: memref<?xf64> {ad.noalias}, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    %w = arith.mulf %v, %v : f64
    memref.store %w, %x[%i] : memref<?xf64>
  }
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %s = arith.addf %acc, %v : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

// out[i] = 2 x[i] for i < n: the forward stores and the reverse's
// "read and zero" of dout[i].
func.func @scale_n(%x: memref<?xf64> {ad.noalias}, %out: memref<?xf64> {ad.noalias}, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f64
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    %w = arith.mulf %v, %two : f64
    memref.store %w, %out[%i] : memref<?xf64>
  }
  func.return
}

// x[i + k]: a shifted read whose forward value the gradient does not need
// (only the primal result does), so its forward load is dead.
func.func @shifted_sum(%x: memref<?xf64> {ad.noalias}, %k: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %j = arith.addi %i, %k : index
    %v = memref.load %x[%j] : memref<?xf64>
    %s = arith.addf %acc, %v : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

// Row i of a matrix for i < n: a subview that leaves the matrix, and the
// same view of the shadow in the reverse sweep.
func.func @rows_n(%a: memref<?x?xf64> {ad.noalias}, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %m = memref.dim %a, %c1 : memref<?x?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %row = memref.subview %a[%i, 0] [1, %m] [1, 1] : memref<?x?xf64> to memref<?xf64, strided<[1], offset: ?>>
    %v = memref.load %row[%c0] : memref<?xf64, strided<[1], offset: ?>>
    %w = arith.mulf %v, %v : f64
    %s = arith.addf %acc, %w : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

// A constant index: x[2] * x[2] on a shorter array.
func.func @third(%x: memref<?xf64> {ad.noalias}) -> f64 {
  %c2 = arith.constant 2 : index
  %v = memref.load %x[%c2] : memref<?xf64>
  %w = arith.mulf %v, %v : f64
  func.return %w : f64
}

// A copy into a local buffer of n elements: the copy's check, and the
// reverse of the copy over the buffer's shadow.
func.func @copy_n(%x: memref<?xf64> {ad.noalias}, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %t = memref.alloc(%n) : memref<?xf64>
  "memref.copy"(%x, %t) : (memref<?xf64>, memref<?xf64>) -> ()
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %t[%i] : memref<?xf64>
    %w = arith.mulf %v, %v : f64
    %s = arith.addf %acc, %w : f64
    scf.yield %s : f64
  }
  memref.dealloc %t : memref<?xf64>
  func.return %r : f64
}

// c[i] for i < n, with c const: the gradient needs none of these values
// (only the primal result does), and no shadow access repeats them; the
// check of c[i] is all that is left of the loop.
func.func @const_table(%x: memref<?xf64> {ad.noalias}, %c: memref<?xf64> {ad.noalias}, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %t = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %c[%i] : memref<?xf64>
    %s = arith.addf %acc, %v : f64
    scf.yield %s : f64
  }
  %x0 = memref.load %x[%c0] : memref<?xf64>
  %w = arith.mulf %x0, %x0 : f64
  %r = arith.addf %t, %w : f64
  func.return %r : f64
}

func.func @requests(%x: memref<?xf64>, %dx: memref<?xf64>, %o: memref<?xf64>, %do: memref<?xf64>,
                    %a: memref<?x?xf64>, %da: memref<?x?xf64>, %n: index, %seed: f64) {
  ad.autodiff @square_n(%x, %dx, %n, %seed) {activity = [dup, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, index, f64) -> ()
  ad.autodiff @scale_n(%x, %dx, %o, %do, %n) {activity = [dup, dup, const], ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, index) -> ()
  ad.autodiff @shifted_sum(%x, %dx, %n, %seed) {activity = [dup, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, index, f64) -> ()
  ad.autodiff @rows_n(%a, %da, %n, %seed) {activity = [dup, const], ret_activity = [active]} : (memref<?x?xf64>, memref<?x?xf64>, index, f64) -> ()
  ad.autodiff @third(%x, %dx, %seed) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  ad.autodiff @const_table(%x, %dx, %o, %n, %seed) {activity = [dup, const, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, index, f64) -> ()
  ad.autodiff @copy_n(%x, %dx, %n, %seed) {activity = [dup, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, index, f64) -> ()
  func.return
}
