// RUN: ad-run %s | filecheck %s
// Execution through ad-run: the reverse pass runs first because the module
// contains ad.autodiff; the gradient of x.y with respect to x is y, and the
// gradient of the scalar exp(a)*a is exp(a)*(1+a).

func.func @dot(%x: memref<?xf64>, %y: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %b = memref.load %y[%i] : memref<?xf64>
    %p = arith.mulf %a, %b : f64
    %s = arith.addf %acc, %p : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

func.func @g(%a: f64) -> f64 {
  %e = math.exp %a : f64
  %r = arith.mulf %e, %a : f64
  func.return %r : f64
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f64
  %zero = arith.constant 0.0 : f64
  %x = memref.alloc(%c3) : memref<?xf64>
  %dx = memref.alloc(%c3) : memref<?xf64>
  %y = memref.alloc(%c3) : memref<?xf64>
  scf.for %i = %c0 to %c3 step %c1 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    %f2 = arith.addf %f, %one : f64
    memref.store %f, %x[%i] : memref<?xf64>
    memref.store %f2, %y[%i] : memref<?xf64>
    memref.store %zero, %dx[%i] : memref<?xf64>
  }
  ad.autodiff @dot(%x, %dx, %y, %one) {activity = [dup, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, f64) -> ()
  %d0 = memref.load %dx[%c0] : memref<?xf64>
  %d1 = memref.load %dx[%c1] : memref<?xf64>
  %d2 = memref.load %dx[%c2] : memref<?xf64>
  // CHECK: dx = 1 2 3
  printf.print_format "dx = {} {} {}\n", %d0 : f64, %d1 : f64, %d2 : f64
  %da = ad.autodiff @g(%one, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  // CHECK-NEXT: dg = 5.43656
  printf.print_format "dg = {}\n", %da : f64
  memref.dealloc %x : memref<?xf64>
  memref.dealloc %dx : memref<?xf64>
  memref.dealloc %y : memref<?xf64>
  func.return
}
