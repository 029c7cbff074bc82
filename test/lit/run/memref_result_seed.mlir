// RUN: ad-run %s | filecheck %s
// The derivative of a function returning a memref, seeded with the
// cotangent of its result (ret_activity = [dup]): out = x * x, so
// dx += 2 * x * dret; and of the tail view x[1:]: dx[1:] += dret.

func.func @square(%x: memref<?xf64>) -> memref<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %out = memref.alloc(%n) : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    %sq = arith.mulf %v, %v : f64
    memref.store %sq, %out[%i] : memref<?xf64>
  }
  func.return %out : memref<?xf64>
}

func.func @tail(%x: memref<?xf64>) -> memref<?xf64, strided<[?], offset: ?>> {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %m = arith.subi %n, %c1 : index
  %v = memref.subview %x[%c1] [%m] [%c1] : memref<?xf64> to memref<?xf64, strided<[?], offset: ?>>
  func.return %v : memref<?xf64, strided<[?], offset: ?>>
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %x = memref.alloc(%c3) : memref<?xf64>
  %dx = memref.alloc(%c3) : memref<?xf64>
  %dret = memref.alloc(%c3) : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    %f1 = arith.addf %f, %one : f64
    memref.store %f1, %x[%i] : memref<?xf64>
    memref.store %zero, %dx[%i] : memref<?xf64>
    memref.store %f, %dret[%i] : memref<?xf64>
  }
  ad.autodiff @square(%x, %dx, %dret) {activity = [dup], ret_activity = [dup]}
    : (memref<?xf64>, memref<?xf64>, memref<?xf64>) -> ()
  %d0 = memref.load %dx[%c0] : memref<?xf64>
  %d1 = memref.load %dx[%c1] : memref<?xf64>
  %d2 = memref.load %dx[%c2] : memref<?xf64>
  // x = 1 2 3, dret = 0 1 2: dx = 2 * x * dret
  // CHECK: dx = 0 4 12
  printf.print_format "dx = {} {} {}\n", %d0 : f64, %d1 : f64, %d2 : f64
  %dv = memref.subview %dret[%c0] [%c2] [%c1] : memref<?xf64> to memref<?xf64, strided<[?], offset: ?>>
  ad.autodiff @tail(%x, %dx, %dv) {activity = [dup], ret_activity = [dup]}
    : (memref<?xf64>, memref<?xf64>, memref<?xf64, strided<[?], offset: ?>>) -> ()
  %e0 = memref.load %dx[%c0] : memref<?xf64>
  %e1 = memref.load %dx[%c1] : memref<?xf64>
  %e2 = memref.load %dx[%c2] : memref<?xf64>
  // dx[1:] += dret[:2] = 0 1
  // CHECK-NEXT: dx = 0 4 13
  printf.print_format "dx = {} {} {}\n", %e0 : f64, %e1 : f64, %e2 : f64
  memref.dealloc %x : memref<?xf64>
  memref.dealloc %dx : memref<?xf64>
  memref.dealloc %dret : memref<?xf64>
  func.return
}
